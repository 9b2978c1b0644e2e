package identity

import "net/http"

// SameSource is sameSource, for the tests of package identity_test.
var SameSource = sameSource

// DecodeListing is decodeListing, for the tests of package identity_test.
var DecodeListing = decodeListing

// Record is record, for the tests of package identity_test.
var Record = record

// ChangesRecords is changesRecords, for the tests of package identity_test.
var ChangesRecords = changesRecords

// ClientTransport is clientTransport over rt, for the tests of package identity_test.
func ClientTransport(rt http.RoundTripper) http.RoundTripper { return clientTransport{rt} }
