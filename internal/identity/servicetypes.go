package identity

import "strings"

// serviceTypeAliases maps each alias of a service type to its official type, as the
// OpenStack Service Types Authority says (service-types.json, its "reverse" table; the
// copy Debian's python3-os-service-types 1.7.0 carries, checked by servicetypes_test.go
// where it is installed). keystoneauth and openstacksdk find a catalog service by any
// of a type's names, so two services of one group are two answers to one question.
var serviceTypeAliases = map[string]string{
	"alarming":                 "alarm",
	"application_deployment":   "application-deployment",
	"bare-metal":               "baremetal",
	"block-store":              "block-storage",
	"cluster":                  "clustering",
	"container":                "application-container",
	"container-infra":          "container-infrastructure-management",
	"container-infrastructure": "container-infrastructure-management",
	"events":                   "event",
	"ha":                       "instance-ha",
	"infra-optim":              "resource-optimization",
	"messaging":                "message",
	"metering":                 "meter",
	"monitoring-log-api":       "monitoring-logging",
	"policy":                   "operator-policy",
	"rca":                      "root-cause-analysis",
	"registration":             "admin-logic",
	"resource-cluster":         "clustering",
	"share":                    "shared-file-system",
	"sharev2":                  "shared-file-system",
	"telemetry":                "meter",
	"tricircle":                "multi-region-network-automation",
	"volume":                   "block-storage",
	"volumev2":                 "block-storage",
	"volumev3":                 "block-storage",
	"workflowv2":               "workflow",
}

// normalType is a service type as clients compare it: os-service-types reads "_" as
// "-" (load_balancer is load-balancer); case is folded too, as Keystone's database
// compares it.
func normalType(t string) string {
	return strings.ReplaceAll(strings.ToLower(t), "_", "-")
}

// ServiceTypeGroup is the official type a service type stands for (normalType, then its
// alias resolved): block-storage for volumev3, shared-file-system for sharev2.
func ServiceTypeGroup(t string) string {
	n := normalType(t)
	if official, ok := serviceTypeAliases[n]; ok {
		return official
	}
	return n
}
