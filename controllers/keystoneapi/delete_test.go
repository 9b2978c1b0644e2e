package keystoneapi

import (
	"testing"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDeletionHeldVerdict(t *testing.T) {
	g := NewWithT(t)
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Finalizers: []string{
		Finalizer, finalizers.For("keystoneservice", "glance"), finalizers.Upstream("keystoneservice", "nova"),
		finalizers.For("keystoneapplicationcredential", "ac-nova"), "example.com/other"}}}
	holders := registrationHolders(api)
	g.Expect(holders).To(Equal([]string{"KeystoneService glance", "KeystoneService nova", "KeystoneApplicationCredential ac-nova"}))
	g.Expect(brief(deletionHeldVerdict(holders))).To(Equal(verdictOf{false, "Requested", lc.SeverityInfo,
		"deleting: waiting for KeystoneService glance, KeystoneService nova, KeystoneApplicationCredential ac-nova to remove their registrations"}))
}
