package dag

import (
	"errors"
	"fmt"
)

// Code is an error code of the 30k Protocol (§5, "Error codes"). Codes are
// what crosses the wire: receipts, problem+json bodies and quarantine records
// carry them. Inside the program errors are values; a *ProtocolError is the
// bridge between the two.
type Code string

// The error codes of 30k §5. The list is the spec's, in the spec's order.
const (
	CodeSchema                   Code = "schema"
	CodeBadSignature             Code = "bad_signature"
	CodeUnknownParent            Code = "unknown_parent"
	CodeNotAuthorized            Code = "not_authorized"
	CodeNoCommonAncestor         Code = "no_common_ancestor"
	CodeUnrevealedSource         Code = "unrevealed_source"
	CodeCommitmentMismatch       Code = "commitment_mismatch"
	CodeStaleMR                  Code = "stale_mr"
	CodeBallotInvalid            Code = "ballot_invalid"
	CodeCapitalExceeded          Code = "capital_exceeded"
	CodeRuleUnknown              Code = "rule_unknown"
	CodeRuleNotSupported         Code = "rule_not_supported"
	CodeDisclosureMissing        Code = "disclosure_missing"
	CodeRateLimited              Code = "rate_limited"
	CodeQuoteMismatch            Code = "quote_mismatch"
	CodeAssertionUnknown         Code = "assertion_unknown"
	CodeCorrectionInvalid        Code = "correction_invalid"
	CodeProfileUnknown           Code = "profile_unknown"
	CodeAnchorInvalid            Code = "anchor_invalid"
	CodeMetricUnknown            Code = "metric_unknown"
	CodeResolutionInvalid        Code = "resolution_invalid"
	CodeGroupNotAuthorized       Code = "group_not_authorized"
	CodeEvidenceInvalid          Code = "evidence_invalid"
	CodeNoticeNotElapsed         Code = "notice_not_elapsed"
	CodeEffectiveInvalid         Code = "effective_invalid"
	CodeContestInvalid           Code = "contest_invalid"
	CodeEmergencyInvalid         Code = "emergency_invalid"
	CodeUnpublishedReference     Code = "unpublished_reference"
	CodeEstimateMissing          Code = "estimate_missing"
	CodeKeyTooNew                Code = "key_too_new"
	CodeRotationInvalid          Code = "rotation_invalid"
	CodeDeadlineTooShort         Code = "deadline_too_short"
	CodeDistrictAttributeInvalid Code = "district_attribute_invalid"
	CodeJurisdictionUnknown      Code = "jurisdiction_unknown"
	CodeAttestationInvalid       Code = "attestation_invalid"
	CodeObserverNotAllowed       Code = "observer_not_allowed"
	CodeComplaintInvalid         Code = "complaint_invalid"
	CodeAddresseeInvalid         Code = "addressee_invalid"
	CodeVariantInvalid           Code = "variant_invalid"
	CodeEstimateIncomplete       Code = "estimate_incomplete"
)

// Codes lists every code of 30k §5 in the spec's order.
var codes = []Code{
	CodeSchema, CodeBadSignature, CodeUnknownParent, CodeNotAuthorized,
	CodeNoCommonAncestor, CodeUnrevealedSource, CodeCommitmentMismatch,
	CodeStaleMR, CodeBallotInvalid, CodeCapitalExceeded, CodeRuleUnknown,
	CodeRuleNotSupported, CodeDisclosureMissing, CodeRateLimited,
	CodeQuoteMismatch, CodeAssertionUnknown, CodeCorrectionInvalid,
	CodeProfileUnknown, CodeAnchorInvalid, CodeMetricUnknown,
	CodeResolutionInvalid, CodeGroupNotAuthorized, CodeEvidenceInvalid,
	CodeNoticeNotElapsed, CodeEffectiveInvalid, CodeContestInvalid,
	CodeEmergencyInvalid, CodeUnpublishedReference, CodeEstimateMissing,
	CodeKeyTooNew, CodeRotationInvalid, CodeDeadlineTooShort,
	CodeDistrictAttributeInvalid, CodeJurisdictionUnknown,
	CodeAttestationInvalid, CodeObserverNotAllowed, CodeComplaintInvalid,
	CodeAddresseeInvalid, CodeVariantInvalid, CodeEstimateIncomplete,
}

// Codes returns every error code of 30k §5, in the spec's order.
func Codes() []Code { return append([]Code(nil), codes...) }

// Known reports whether c is one of the spec's codes.
func (c Code) Known() bool {
	for _, k := range codes {
		if k == c {
			return true
		}
	}
	return false
}

// String returns the code as written on the wire; a code that is not the
// spec's is shown as unknown so that it stands out in logs.
func (c Code) String() string {
	if c.Known() {
		return string(c)
	}
	return fmt.Sprintf("unknown_code(%q)", string(c))
}

// ProtocolError is an error that carries a 30k error code. Detail is for
// people; programs look at Code (with errors.As, or CodeOf).
type ProtocolError struct {
	Code   Code
	Detail string
	Err    error // optional cause
}

func (e *ProtocolError) Error() string {
	if e.Detail == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Detail
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// Errorf returns a *ProtocolError with code c and a formatted detail. A %w
// verb in format is kept as the cause.
func Errorf(c Code, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &ProtocolError{Code: c, Detail: err.Error(), Err: errors.Unwrap(err)}
}

// CodeOf returns the code of the first *ProtocolError in err's chain, or ""
// when there is none.
func CodeOf(err error) Code {
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
