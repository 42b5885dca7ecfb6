package violation

// DecodeJSON is decode, for the probes of package violation_test, which
// read answers as the switches do.
var DecodeJSON = decode
