package keystoneapi

import (
	"errors"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
)

func TestExternalVerdict(t *testing.T) {
	api := &keystonev1.KeystoneAPI{Spec: keystonev1.KeystoneAPISpec{AdminUser: "admin", AdminProject: "admin", Region: "regionTwo",
		Secret: "osp-secret"}}
	url := "https://keystone.example:5000"
	g := NewWithT(t)
	g.Expect(brief(externalVerdict(api, url, nil))).To(Equal(verdictOf{true, "", "", "admin admin authenticated at " + url +
		", region regionTwo exists"}))
	g.Expect(brief(externalVerdict(api, url, &missingRegionError{region: "regionTwo"}))).To(Equal(verdictOf{false, "DependencyNotFound",
		lc.SeverityWarning, "Keystone at " + url + " has no region regionTwo, which this KeystoneAPI's registrations put their " +
			"endpoints in: create it (openstack region create regionTwo), or set spec.region to one it has"}))
	refused := gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusUnauthorized}
	want := verdictOf{false, "InvalidInput", lc.SeverityError, "Keystone at " + url + " refused the credentials of admin admin in " +
		"project admin; tried again when the secret osp-secret or this KeystoneAPI changes, not before: every refusal counts " +
		"towards Keystone's lockout"}
	g.Expect(brief(externalVerdict(api, url, refused))).To(Equal(want))
	g.Expect(brief(externalVerdict(api, url, &identity.LoginRefusedError{User: "admin", Earlier: true, Err: refused}))).To(Equal(want),
		"a login refused earlier, not tried again")
	g.Expect(brief(externalVerdict(api, url, errors.New("connection refused")))).To(Equal(verdictOf{false, "ServiceUnavailable",
		lc.SeverityWarning, "Keystone at " + url + ": connection refused"}))
}
