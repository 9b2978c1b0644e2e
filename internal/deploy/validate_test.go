package deploy

import (
	"strings"
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
)

// TestSpecProblems: what no schema can say, refused with the reason (the rules
// keystone-operator's schema also lacks are in tests/functional's schema table).
func TestSpecProblems(t *testing.T) {
	g := NewWithT(t)
	g.Expect(SpecProblems(testAPI())).To(BeEmpty())
	for name, want := range map[string]string{
		strings.Repeat("k", MaxNameLength):   "",
		strings.Repeat("k", MaxNameLength+1): "at most 47",
		"1keystone":                          "starting with a letter",
		"Keystone":                           "lower case",
	} {
		api := testAPI()
		api.Name = name
		problems := strings.Join(SpecProblems(api), "; ")
		if want == "" {
			g.Expect(problems).To(BeEmpty(), name)
			continue
		}
		g.Expect(problems).To(ContainSubstring(want), name)
	}
	external := testAPI()
	external.Name = strings.Repeat("k", MaxNameLength+1)
	external.Spec.ExternalKeystoneAPI = true
	external.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To("https://keystone.example.com")},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To("https://keystone.example.com")},
	}
	g.Expect(SpecProblems(external)).To(BeEmpty(), "external mode makes no Service or CronJob")
}

func TestTrustFlushScheduleProblem(t *testing.T) {
	g := NewWithT(t)
	for schedule, want := range map[string]string{
		"":                      "",
		"1 * * * *":             "",
		"@hourly":               "",
		"*/15 2-4 * * MON-FRI":  "",
		"every hour":            "is not a cron schedule",
		"61 * * * *":            "is not a cron schedule",
		"* * * *":               "is not a cron schedule",
		"CRON_TZ=UTC 1 * * * *": "a time zone is not supported",
	} {
		api := testAPI()
		api.Spec.TrustFlushSchedule = schedule
		g.Expect(TrustFlushScheduleProblem(api)).To(ContainSubstring(want), schedule)
		if want == "" {
			g.Expect(TrustFlushScheduleProblem(api)).To(BeEmpty(), schedule)
		}
	}
}
