package container

// FreePorts lets the tests choose the ports Run tries.
var FreePorts = &freePorts
