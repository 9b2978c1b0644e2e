// Package permissions answers what the manager may do, as the API server said at start
// (a SelfSubjectRulesReview), so that it never makes a request it would be refused.
package permissions
