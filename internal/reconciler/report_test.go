package reconciler

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestFinishResolvesUnrelatedConflicts: a round's status write that conflicts with a
// writer who left the spec alone (a finalizer, a label) is written again on the newer
// object, keeping that writer's change; one that conflicts with a new spec is not (the
// round's verdicts are for the older spec): the conflict is returned, and the round
// runs again.
func TestFinishResolvesUnrelatedConflicts(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := keystonev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	step := keystonev1.KeystoneServiceSteps[0]
	for _, tc := range []struct {
		name      string
		meanwhile func(*keystonev1.KeystoneService)
		conflict  bool
	}{
		{"a finalizer and a label added", func(o *keystonev1.KeystoneService) {
			o.Finalizers = append(o.Finalizers, "openstack.org/glance")
			o.Labels = map[string]string{"team": "images"}
		}, false},
		{"a new spec", func(o *keystonev1.KeystoneService) {
			o.Spec.ServiceDescription = "changed"
			o.Generation = 2
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			stored := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "glance", Generation: 1}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).Build()
			obj := &keystonev1.KeystoneService{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(stored), obj)).To(Succeed())
			base := obj.DeepCopy()

			other := obj.DeepCopy()
			tc.meanwhile(other)
			g.Expect(c.Update(ctx, other)).To(Succeed())

			round := condition.Steps(keystonev1.KeystoneServiceSteps).Begin(obj.Status.Conditions, time.Now())
			round.Apply(step, condition.TrueVerdict("done"))
			r := Reporter{Client: c, Recorder: record.NewFakeRecorder(100), Versions: NewVersions()}
			_, err := r.Finish(ctx, obj, base, nil, round, nil)

			now := &keystonev1.KeystoneService{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(stored), now)).To(Succeed())
			if tc.conflict {
				g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
				g.Expect(now.Status.Conditions).To(BeEmpty(), "nothing written for the older spec")
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(now.Status.Conditions.Get(step)).NotTo(BeNil())
			g.Expect(now.Status.Conditions.Get(step).Status).To(BeEquivalentTo("True"))
			g.Expect(now.Status.ObservedGeneration).To(BeEquivalentTo(1))
			g.Expect(now.Finalizers).To(ContainElement("openstack.org/glance"), "the other writer's change kept")
			g.Expect(now.Labels).To(HaveKeyWithValue("team", "images"))
		})
	}
}

// TestStatusPatchIsTheStatusPart: the status write's patch is client.MergeFrom's patch
// of the whole object restricted to its status (what the status subresource writes),
// and nothing when only the spec or metadata differ; a field cleared is written null.
func TestStatusPatchIsTheStatusPart(t *testing.T) {
	g := NewWithT(t)
	base := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "ns", ResourceVersion: "7",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec:   keystonev1.KeystoneServiceSpec{ServiceType: "image", ServiceName: "glance"},
		Status: keystonev1.KeystoneServiceStatus{ServiceID: "old", ObservedGeneration: 1}}
	obj := base.DeepCopy()
	obj.Finalizers = []string{"f"}
	obj.Spec.ServiceDescription = "changed"
	data, err := statusPatch(base, obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal("{}"), "the status is the same")

	obj.Status.ServiceID = ""
	obj.Status.ObservedGeneration = 2
	obj.Status.Conditions = lc.Conditions{{Type: "Ready", Status: corev1.ConditionTrue, Reason: "Ready", Message: "done"}}
	data, err = statusPatch(base, obj)
	g.Expect(err).NotTo(HaveOccurred())
	whole, err := client.MergeFrom(base).Data(obj)
	g.Expect(err).NotTo(HaveOccurred())
	var ours, theirs map[string]any
	g.Expect(json.Unmarshal(data, &ours)).To(Succeed())
	g.Expect(json.Unmarshal(whole, &theirs)).To(Succeed())
	g.Expect(ours).To(Equal(map[string]any{"status": theirs["status"]}))
	g.Expect(ours["status"]).To(HaveKeyWithValue("serviceID", BeNil()), "cleared: written null")
}
