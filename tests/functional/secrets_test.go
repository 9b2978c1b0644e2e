package functional

import (
	"encoding/json"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// published gathers what anyone who can read the KeystoneAPI, its workloads and the
// namespace's Events sees: the KeystoneAPI's status, and the labels and annotations of
// every Job, Deployment (and its pod template), Service and Secret.
type published struct {
	Status string
	// Hash is status.hash.
	Hash        map[string]string
	Annotations map[string]string
	Labels      map[string]string
	Events      []string
}

func publishedIn(ns string, key types.NamespacedName) published {
	GinkgoHelper()
	p := published{Annotations: map[string]string{}, Labels: map[string]string{}}
	api := getAPI(key)(Default)
	status, err := json.Marshal(api.Status)
	Expect(err).NotTo(HaveOccurred())
	p.Status, p.Hash = string(status), api.Status.Hash
	add := func(kind string, meta ...interface {
		GetName() string
		GetLabels() map[string]string
		GetAnnotations() map[string]string
	}) {
		for _, m := range meta {
			for k, v := range m.GetAnnotations() {
				p.Annotations[kind+"/"+m.GetName()+":"+k] = v
			}
			for k, v := range m.GetLabels() {
				p.Labels[kind+"/"+m.GetName()+":"+k] = v
			}
		}
	}
	jobs := &batchv1.JobList{}
	Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns))).To(Succeed())
	for i := range jobs.Items {
		add("job", &jobs.Items[i], &jobs.Items[i].Spec.Template)
	}
	deps := &appsv1.DeploymentList{}
	Expect(k8sClient.List(ctx, deps, client.InNamespace(ns))).To(Succeed())
	for i := range deps.Items {
		add("deployment", &deps.Items[i])
		add("deployment-pods", &deps.Items[i].Spec.Template)
	}
	services := &corev1.ServiceList{}
	Expect(k8sClient.List(ctx, services, client.InNamespace(ns))).To(Succeed())
	for i := range services.Items {
		add("service", &services.Items[i])
	}
	secrets := &corev1.SecretList{}
	Expect(k8sClient.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
	for i := range secrets.Items {
		add("secret", &secrets.Items[i])
	}
	events := &corev1.EventList{}
	Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	for _, e := range events.Items {
		p.Events = append(p.Events, e.Message)
	}
	return p
}

// contains tells whether any published value contains s.
func (p published) contains(s string) bool {
	if strings.Contains(p.Status, s) {
		return true
	}
	for _, m := range []map[string]string{p.Annotations, p.Labels} {
		for _, v := range m {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	for _, e := range p.Events {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

// hashes returns the values of p that depend on the inputs: status.hash and the
// annotations the operator sets on jobs and pod templates.
func (p published) hashes() map[string]string {
	out := map[string]string{}
	for k, v := range p.Hash {
		out["status.hash."+k] = v
	}
	for k, v := range p.Annotations {
		if strings.HasSuffix(k, ":"+deploy.HashAnnotation) {
			out[k] = v
		}
	}
	return out
}

var _ = Describe("Secret values", func() {
	It("are never published, not even as a digest an offline guess could be checked against", func() {
		ns := newNamespace()
		key := deployReady(ns, func(a *keystonev1.KeystoneAPI) { a.Spec.PreserveJobs = true })
		api := getAPI(key)(Default)
		config := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-config-data"}, config)).To(Succeed())
		files := map[string]string{}
		for k, v := range config.Data {
			files[k] = string(v)
		}
		dbSecret := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "keystone-db-secret"}, dbSecret)).To(Succeed())
		dbPassword := string(dbSecret.Data["DatabasePassword"])
		Expect(dbPassword).NotTo(BeEmpty())

		// What an attacker who reads status would compute from a guess: a digest of the
		// password alone, of the rendered files, and of the bootstrap's inputs with it.
		bootstrapInputs := map[string]string{
			"dbsync": api.Status.Hash["dbsync"], "user": "admin", "project": "admin", "region": "regionOne",
			"password": deploy.Hash(map[string]string{"p": "secret-admin"}),
		}
		for iface, url := range api.Status.APIEndpoints {
			bootstrapInputs["endpoint-"+iface] = url
		}
		p := publishedIn(ns, key)
		for name, digest := range map[string]string{
			"the admin password":          deploy.Hash(map[string]string{"p": "secret-admin"}),
			"the rendered configuration":  deploy.Hash(files),
			"the bootstrap's inputs":      deploy.Hash(bootstrapInputs),
			"the admin password, plainly": "secret-admin",
			"the database password":       dbPassword,
		} {
			Expect(p.contains(digest)).To(BeFalse(), "%s is published", name)
		}

		By("changing only the admin password runs bootstrap again and changes nothing published")
		before := p.hashes()
		setSecretKey(ns, "osp-secret", "AdminPassword", "another-admin-secret")
		expectConditions(key, condition{"BootstrapReady", "False", "Created", "Info"})
		finishJob(ns, "keystone-bootstrap", true, "")
		expectConditions(key, condition{"Ready", "True", "Ready", ""})
		after := publishedIn(ns, key)
		Expect(after.hashes()).To(Equal(before))
		Expect(after.contains("another-admin-secret")).To(BeFalse())

		By("a reconcile after that runs nothing again")
		touch(key)
		Consistently(func(g Gomega) {
			g.Expect(summary(getAPI(key)(g).Status.Conditions)).To(ContainElement(condition{"BootstrapReady", "True", "Ready", ""}))
		}).Should(Succeed())
	})
})
