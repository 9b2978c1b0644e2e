package functional

import (
	"context"
	"maps"
	"sync"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keystoneAPI returns a minimal KeystoneAPI that the schema accepts.
func keystoneAPI(ns string) *keystonev1.KeystoneAPI {
	return &keystonev1.KeystoneAPI{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: ns},
		Spec: keystonev1.KeystoneAPISpec{
			ContainerImage:   "quay.io/podified-antelope-centos9/openstack-keystone:current-podified",
			Secret:           "osp-secret",
			DatabaseInstance: "openstack",
		},
	}
}

// externalKeystoneAPI returns a KeystoneAPI in external mode.
func externalKeystoneAPI(ns string) *keystonev1.KeystoneAPI {
	api := keystoneAPI(ns)
	api.Spec.DatabaseInstance = ""
	api.Spec.ExternalKeystoneAPI = true
	api.Spec.Override.Service = &keystonev1.ServiceOverrides{
		Public:   &keystonev1.EndpointOverride{EndpointURL: ptr.To("https://keystone.example.com")},
		Internal: &keystonev1.EndpointOverride{EndpointURL: ptr.To("http://keystone-internal.example.com:5000")},
	}
	return api
}

// allowRoles lets the registrations of namespace ns ask for roles beyond
// keystone-operator's admin and service (spec.registrationPolicy.roles of its KeystoneAPI
// keystone), and waits until the KeystoneAPI is Ready again for that generation.
func allowRoles(ns string, roles ...string) {
	GinkgoHelper()
	setPolicy(ns, func(p *keystonev1.RegistrationPolicy) { p.Roles = append([]string{"admin", "service"}, roles...) })
}

// setPolicy changes spec.registrationPolicy of namespace ns's KeystoneAPI keystone and
// waits until the KeystoneAPI is Ready for that generation.
func setPolicy(ns string, change func(*keystonev1.RegistrationPolicy)) {
	GinkgoHelper()
	changePolicy(ns, func(api *keystonev1.KeystoneAPI) {
		if api.Spec.RegistrationPolicy == nil {
			api.Spec.RegistrationPolicy = &keystonev1.RegistrationPolicy{}
		}
		change(api.Spec.RegistrationPolicy)
	})
}

// dropPolicy removes spec.registrationPolicy from namespace ns's KeystoneAPI keystone,
// as keystone-operator's schema prunes it, and waits as setPolicy does.
func dropPolicy(ns string) {
	GinkgoHelper()
	changePolicy(ns, func(api *keystonev1.KeystoneAPI) { api.Spec.RegistrationPolicy = nil })
}

// changePolicy updates namespace ns's KeystoneAPI keystone with change and waits until
// the KeystoneAPI is Ready for that generation.
func changePolicy(ns string, change func(*keystonev1.KeystoneAPI)) {
	GinkgoHelper()
	key := types.NamespacedName{Namespace: ns, Name: "keystone"}
	var generation int64
	Eventually(func(g Gomega) {
		api := &keystonev1.KeystoneAPI{}
		g.Expect(k8sClient.Get(context.Background(), key, api)).To(Succeed())
		change(api)
		g.Expect(k8sClient.Update(context.Background(), api)).To(Succeed())
		generation = api.Generation
	}).Should(Succeed())
	Eventually(func(g Gomega) {
		api := &keystonev1.KeystoneAPI{}
		g.Expect(k8sClient.Get(context.Background(), key, api)).To(Succeed())
		g.Expect(api.Status.ObservedGeneration).To(Equal(generation))
		g.Expect(api.IsReady()).To(BeTrue())
	}).Should(Succeed())
}

// keystoneService returns a minimal KeystoneService that the schema accepts.
func keystoneService(ns string) *keystonev1.KeystoneService {
	return &keystonev1.KeystoneService{
		ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: ns},
		Spec: keystonev1.KeystoneServiceSpec{
			ServiceType:      "image",
			ServiceName:      "glance",
			ServiceUser:      "glance",
			Secret:           "osp-secret",
			PasswordSelector: "GlancePassword",
		},
	}
}

// glanceEndpoints are the URLs of keystoneEndpoint.
var glanceEndpoints = map[string]string{
	"public":   "https://glance.example.com",
	"internal": "http://glance-internal.openstack.svc:9292",
}

// keystoneEndpoint returns a KeystoneEndpoint of the glance KeystoneService with glanceEndpoints.
func keystoneEndpoint(ns string) *keystonev1.KeystoneEndpoint {
	urls := map[string]string{}
	for k, v := range glanceEndpoints {
		urls[k] = v
	}
	return &keystonev1.KeystoneEndpoint{
		ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: ns},
		Spec:       keystonev1.KeystoneEndpointSpec{ServiceName: "glance", Endpoints: urls},
	}
}

func getEndpoint(key types.NamespacedName) func(g Gomega) *keystonev1.KeystoneEndpoint {
	return func(g Gomega) *keystonev1.KeystoneEndpoint {
		ep := &keystonev1.KeystoneEndpoint{}
		g.Expect(k8sClient.Get(context.Background(), key, ep)).To(Succeed())
		return ep
	}
}

// expectObservedConditions waits until the object of key describes its current
// generation and its conditions include want.
func expectObservedConditions[T client.Object](key types.NamespacedName, obj T, status func(T) (lc.Conditions, int64), want ...condition) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), key, obj)).To(Succeed())
		conds, observed := status(obj)
		g.Expect(observed).To(Equal(obj.GetGeneration()))
		g.Expect(summary(conds)).To(ContainElements(want))
	}).Should(Succeed())
}

// condition is what a spec expects of one condition.
type condition struct {
	Type     lc.Type
	Status   corev1.ConditionStatus
	Reason   lc.Reason
	Severity lc.Severity
}

func summary(cs lc.Conditions) []condition {
	out := make([]condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, condition{c.Type, c.Status, c.Reason, c.Severity})
	}
	return out
}

func getAPI(key types.NamespacedName) func(g Gomega) *keystonev1.KeystoneAPI {
	return func(g Gomega) *keystonev1.KeystoneAPI {
		api := &keystonev1.KeystoneAPI{}
		g.Expect(k8sClient.Get(context.Background(), key, api)).To(Succeed())
		return api
	}
}

func getService(key types.NamespacedName) func(g Gomega) *keystonev1.KeystoneService {
	return func(g Gomega) *keystonev1.KeystoneService {
		svc := &keystonev1.KeystoneService{}
		g.Expect(k8sClient.Get(context.Background(), key, svc)).To(Succeed())
		return svc
	}
}

func runtimeToUnstructured(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

func unstructuredOf(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// update reads obj by key, applies mutate and updates it, again until no conflict.
func update[T client.Object](key types.NamespacedName, obj T, mutate func(T)) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(context.Background(), key, obj)).To(Succeed())
		mutate(obj)
		g.Expect(k8sClient.Update(context.Background(), obj)).To(Succeed())
	}).Should(Succeed())
}

// touchAnnotation changes an annotation, which forces a reconcile without a new generation.
func touchAnnotation[T client.Object](obj T) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["test/touch"] = time.Now().Format(time.RFC3339Nano)
	obj.SetAnnotations(a)
}

// poke has the operator start a round again from obj as the API server holds it: an
// annotation changed (not the spec), with obj's resourceVersion.
func poke(g Gomega, obj client.Object) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["test.keystone.openstack.org/poke"] = obj.GetResourceVersion()
	obj.SetAnnotations(a)
	g.Expect(k8sClient.Update(ctx, obj)).To(Succeed())
}

// conditionLog is every status each condition of one object had, as a watch saw them.
type conditionLog struct {
	mu   sync.Mutex
	seen map[lc.Type][]corev1.ConditionStatus
}

func (l *conditionLog) statuses(t lc.Type) []corev1.ConditionStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]corev1.ConditionStatus(nil), l.seen[t]...)
}

// watchConditions records, from now on, every status of every condition of the
// KeystoneAPI of key, as a user's `kubectl get -w` would see them.
func watchConditions(key types.NamespacedName) *conditionLog {
	GinkgoHelper()
	wc, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: manager.Scheme})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(context.Background(), &keystonev1.KeystoneAPIList{}, client.InNamespace(key.Namespace),
		client.MatchingFields{"metadata.name": key.Name})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	log := &conditionLog{seen: map[lc.Type][]corev1.ConditionStatus{}}
	go func() {
		for ev := range w.ResultChan() {
			api, ok := ev.Object.(*keystonev1.KeystoneAPI)
			if !ok {
				continue
			}
			log.mu.Lock()
			for _, c := range api.Status.Conditions {
				log.seen[c.Type] = append(log.seen[c.Type], c.Status)
			}
			log.mu.Unlock()
		}
	}()
	return log
}

// allowed asks the API server's authorizer whether user may do what attrs say.
func allowed(user string, attrs authorizationv1.ResourceAttributes) bool {
	GinkgoHelper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}, ResourceAttributes: &attrs,
	}}
	Expect(k8sClient.Create(context.Background(), review)).To(Succeed())
	return review.Status.Allowed
}

// clusterID is the envtest cluster's identity: its kube-system namespace's UID, which
// the operator puts in its marks in Keystone.
func clusterID() string {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	Expect(k8sClient.Get(context.Background(), types.NamespacedName{Name: "kube-system"}, ns)).To(Succeed())
	return string(ns.UID)
}

// readyAtFakeKeystone starts a fake Keystone for the spec and makes the namespace's
// KeystoneAPI an external one at it, Ready, with osp-secret holding the admin's
// password and passwords.
func readyAtFakeKeystone(ns string, passwords map[string]string) *fakekeystone.Server {
	GinkgoHelper()
	ks := fakekeystone.New("admin", "secret-admin")
	DeferCleanup(ks.Close)
	api := externalKeystoneAPI(ns)
	api.Spec.Override.Service.Internal.EndpointURL = ptr.To(ks.URL)
	Expect(k8sClient.Create(ctx, api)).To(Succeed())
	data := map[string]string{"AdminPassword": "secret-admin"}
	maps.Copy(data, passwords)
	createSecret(ns, "osp-secret", data)
	expectConditions(client.ObjectKeyFromObject(api), condition{"Ready", "True", "Ready", ""})
	return ks
}
