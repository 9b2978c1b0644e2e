package deploy

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/endpointurl"
	"github.com/openstack-k8s-operators/lib-common/modules/storage"
	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxNameLength is the longest KeystoneAPI name whose objects Kubernetes accepts: the
// trust flush CronJob <name>-cron may have at most 52 characters (its Jobs add 11).
const MaxNameLength = 52 - len("-cron")

var fileName = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// SpecProblems lists what in a KeystoneAPI's spec no object can be made from: the rules
// of this suite's schema (its CEL rules among them), checked again because the operator
// may run on keystone-operator's CRDs, which lack them, and what no schema can say (the
// names of the objects derived from the KeystoneAPI's). Empty when there is nothing.
// The trust flush schedule is checked apart (TrustFlushScheduleProblem): it concerns one
// step.
func SpecProblems(api *keystonev1.KeystoneAPI) []string {
	var out []string
	// Only a deployed Keystone has Services and a CronJob named after the KeystoneAPI.
	if errs := validation.IsDNS1035Label(api.Name); !api.Spec.ExternalKeystoneAPI && (len(errs) > 0 || len(api.Name) > MaxNameLength) {
		out = append(out, fmt.Sprintf("the name %q cannot name Keystone's Services and CronJob: it must be at most %d "+
			"lower case letters, digits and '-', starting with a letter", api.Name, MaxNameLength))
	}
	out = append(out, requiredProblems(api)...)
	for _, name := range slices.Sorted(maps.Keys(api.Spec.DefaultConfigOverwrite)) {
		if !fileName.MatchString(name) {
			out = append(out, fmt.Sprintf("defaultConfigOverwrite key %q is not a file name (letters, digits, '-', '_' and '.'), for example policy.yaml", name))
		}
	}
	return append(out, extraMountProblems(api)...)
}

// requiredProblems: what each mode needs (secret, database or Keystone's URLs), and
// override URLs that are URLs. An empty containerImage is none: the controller sets
// its default before any step runs.
func requiredProblems(api *keystonev1.KeystoneAPI) []string {
	var out []string
	spec := api.Spec
	if spec.Secret == "" {
		out = append(out, "secret is empty: it names the Secret holding the admin's password")
	}
	if spec.ExternalKeystoneAPI {
		if api.EndpointOverrideURL(keystonev1.EndpointPublic) == "" || api.EndpointOverrideURL(keystonev1.EndpointInternal) == "" {
			out = append(out, "externalKeystoneAPI needs both override.service.public.endpointURL and "+
				"override.service.internal.endpointURL: they say where the existing Keystone is")
		}
	} else if spec.DatabaseInstance == "" {
		out = append(out, "databaseInstance is required unless externalKeystoneAPI is set: it names the MariaDB instance for Keystone's database")
	}
	for _, iface := range Interfaces {
		if u := api.EndpointOverrideURL(iface); u != "" && !endpointurl.AbsoluteHTTP(u) && !endpointurl.Hostless(u) {
			out = append(out, fmt.Sprintf("override.service.%s.endpointURL %q must be an absolute http or https URL, for example https://keystone.example.com", iface, u))
		}
	}
	return out
}

// extraMountProblems: volumes of a type keystone-operator's schema no longer has.
func extraMountProblems(api *keystonev1.KeystoneAPI) []string {
	var out []string
	for i := range api.Spec.ExtraMounts {
		for _, vm := range api.Spec.ExtraMounts[i].VolMounts {
			for _, v := range vm.Volumes {
				if kind := retiredVolumeKind(v.VolumeSource); kind != "" {
					out = append(out, fmt.Sprintf("extraMounts volume %s is a %s volume: extraMounts volumes may be configMap, secret, "+
						"emptyDir, persistentVolumeClaim, projected, nfs or csi, as keystone-operator's schema allows", v.Name, kind))
				}
			}
		}
	}
	return out
}

// retiredVolumeKind names the volume type of v that lib-common's Volume no longer has
// (keystone-operator's schema refuses it since); "" for the others.
func retiredVolumeKind(v storage.VolumeSource) string {
	for _, k := range []struct {
		kind string
		set  bool
	}{
		{"hostPath", v.HostPath != nil}, {"cephfs", v.CephFS != nil}, {"downwardAPI", v.DownwardAPI != nil}, {"fc", v.FC != nil},
		{"iscsi", v.ISCSI != nil}, {"scaleIO", v.ScaleIO != nil}, {"storageos", v.StorageOS != nil},
	} {
		if k.set {
			return k.kind
		}
	}
	return ""
}

// TrustFlushScheduleProblem says why trustFlushSchedule is no schedule a CronJob
// accepts (Kubernetes parses it as standard cron with robfig/cron, without a time
// zone); "" when it is one.
func TrustFlushScheduleProblem(api *keystonev1.KeystoneAPI) string {
	schedule := TrustFlushSchedule(api)
	if strings.Contains(schedule, "TZ") {
		return fmt.Sprintf("trustFlushSchedule %q: a time zone is not supported, the schedule runs in the cluster's", schedule)
	}
	if _, err := cron.ParseStandard(schedule); err != nil {
		return fmt.Sprintf("trustFlushSchedule %q is not a cron schedule (for example \"1 * * * *\"): %v", schedule, err)
	}
	return ""
}

// PendingEndpoints lists the override URLs that are http or https URLs without a host
// yet: openstack-operator writes "http://" until its Route has a host, and corrects it
// on its next pass. Waited for, not refused.
func PendingEndpoints(api *keystonev1.KeystoneAPI) []string {
	var out []string
	for _, iface := range Interfaces {
		if u := api.EndpointOverrideURL(iface); endpointurl.Hostless(u) {
			out = append(out, fmt.Sprintf("override.service.%s.endpointURL %q", iface, u))
		}
	}
	return out
}
