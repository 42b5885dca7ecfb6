package jsonbody

import (
	"math"
	"testing"
)

// TestJSONInteger: a JSON number is an integer when its value is one, as
// JSON Schema 2020-12 says (Validation §6.1.1) and so as the OpenAPI
// document's `type: integer` means; it is read exactly and saturates past
// int64.
func TestJSONInteger(t *testing.T) {
	tests := []struct {
		raw   string
		want  int64
		isInt bool
	}{
		{"5", 5, true},
		{"-5", -5, true},
		{"0", 0, true},
		{"-0", 0, true},
		{"1.0", 1, true},
		{"1.000", 1, true},
		{"0.0", 0, true},
		{"-0.0e5", 0, true},
		{"1e0", 1, true},
		{"5E1", 50, true},
		{"5e+1", 50, true},
		{"50e-1", 5, true},
		{"0.5e1", 5, true},
		{"1500e-3", 0, false},
		{"1.5", 0, false},
		{"0.1", 0, false},
		{"1e-1", 0, false},
		{"9007199254740993.0", 9007199254740993, true}, // float64 would read ...992
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"-9223372036854775809", math.MinInt64, true},
		{"99999999999999999999", math.MaxInt64, true},
		{"1e19", math.MaxInt64, true},
		{"1e18", 1e18, true},
		{"1e999999999", math.MaxInt64, true},
		{"-1e99999999999999999999", math.MinInt64, true},
		{"1e-99999999999999999999", 0, false},
		{"0e-99999999999999999999", 0, true},
		{"01", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"+1", 0, false},
		{`"1"`, 0, false},
		{"true", 0, false},
		{"[1]", 0, false},
		{"1 ", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, isInt := jsonInteger(tt.raw)
			if isInt != tt.isInt || isInt && got != tt.want {
				t.Fatalf("jsonInteger(%s) = %d, %v; want %d, %v", tt.raw, got, isInt, tt.want, tt.isInt)
			}
		})
	}
}
