// Package reasons declares the API's own reasons with their one severity
// (keystonev1.ReasonSeverity), for every controller alike.
package reasons
