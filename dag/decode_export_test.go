package dag

// The two halves of DecodeSigned, for the differential tests in dag_test.
var (
	DecodeCanonical = decodeCanonical
	DecodeGeneral   = decodeGeneral
)
