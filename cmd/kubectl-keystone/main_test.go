package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/tests/support/fakekeystone"
	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"
)

// kubeconfig writes a kubeconfig whose context names namespace openstack, and points
// KUBECONFIG at it: the namespace a command without -n reads.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: openstack}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return path
}

// crdMapper resolves types as a cluster with this suite's CRDs (config/crd/bases: their
// plurals, singulars, short names and kinds) and Kubernetes' pods and deployments would,
// through discovery with kubectl's short-name expansion.
func crdMapper(*genericclioptions.ConfigFlags) (meta.RESTMapper, error) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod",
			ShortNames: []string{"po"}, Verbs: metav1.Verbs{"get", "list"}}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", SingularName: "deployment", Namespaced: true,
			Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: metav1.Verbs{"get", "list"}}}},
	}
	paths, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the CRDs: %w", err)
	}
	if len(paths) == 0 {
		return nil, errors.New("no CRD in config/crd/bases")
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		names := crd.Spec.Names
		for _, v := range crd.Spec.Versions {
			gv := crd.Spec.Group + "/" + v.Name
			i := slices.IndexFunc(lists, func(l *metav1.APIResourceList) bool { return l.GroupVersion == gv })
			if i < 0 {
				lists, i = append(lists, &metav1.APIResourceList{GroupVersion: gv}), len(lists)
			}
			lists[i].APIResources = append(lists[i].APIResources, metav1.APIResource{Name: names.Plural, SingularName: names.Singular,
				Namespaced: true, Kind: names.Kind, ShortNames: names.ShortNames, Categories: names.Categories, Verbs: metav1.Verbs{"get", "list"}})
		}
	}
	discovery := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
	groups, err := restmapper.GetAPIGroupResources(discovery)
	if err != nil {
		return nil, err
	}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), discovery, func(string) {}), nil
}

// result is what a command printed and returned, with the connection flags it was
// given.
type result struct {
	out, errOut string
	err         error
	config      *genericclioptions.ConfigFlags
}

// runWith runs kubectl keystone with args against c.
func runWith(c client.Client, args ...string) result {
	var out, errOut bytes.Buffer
	var r result
	cmd := newCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, func(cf *genericclioptions.ConfigFlags) (client.Client, error) {
		r.config = cf
		return c, nil
	}, crdMapper)
	cmd.SetArgs(args)
	r.err = cmd.Execute()
	r.out, r.errOut = out.String(), errOut.String()
	return r
}

// drawnAt is the time the tree draws ages from in these tests (now), so that an age
// does not depend on how long a test took on a loaded machine.
var drawnAt = time.Now()

func init() { now = func() time.Time { return drawnAt } }

// changed is five minutes before the tree is drawn: the age drawn is 5m.
func changed() metav1.Time { return metav1.NewTime(drawnAt.Add(-5 * time.Minute)) }

func cond(t lc.Type, status corev1.ConditionStatus, reason lc.Reason, severity lc.Severity, msg string) lc.Condition {
	return lc.Condition{Type: t, Status: status, Reason: reason, Severity: severity, Message: msg, LastTransitionTime: changed()}
}

// cloud is two namespaces: openstack, whose KeystoneAPI waits on a db-sync Job with a
// failed attempt behind it and a pod that cannot pull its image, and glance's
// registration; and other, Ready, with its Deployment.
func cloud() []client.Object {
	blocked := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack", UID: "api-1"},
		Status: keystonev1.KeystoneAPIStatus{Conditions: lc.Conditions{
			cond("Ready", "False", "Created", lc.SeverityInfo, "DBSyncReady (8/14 ready): job keystone-db-sync running (1 failed attempts so far)"),
			cond("InputReady", "True", "Ready", "", "admin password found in secret osp-secret"),
			cond("DBSyncReady", "False", "Created", lc.SeverityInfo, "job keystone-db-sync running (1 failed attempts so far)"),
			cond("DeploymentReady", "Unknown", "Init", "", "waiting for DBSyncReady"),
		}}}
	owner := []metav1.OwnerReference{{APIVersion: "keystone.openstack.org/v1beta1", Kind: "KeystoneAPI", Name: "keystone", UID: "api-1"}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "keystone-db-sync", Namespace: "openstack", OwnerReferences: owner},
		Spec:   batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "keystone-db-sync"}}},
		Status: batchv1.JobStatus{Active: 1, Failed: 1}}
	bootstrap := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "keystone-bootstrap", Namespace: "openstack", OwnerReferences: owner}}
	pod := func(name string, created time.Duration, status corev1.PodStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openstack", Labels: map[string]string{"job-name": "keystone-db-sync"},
			CreationTimestamp: metav1.NewTime(changed().Add(created))}, Status: status}
	}
	failed := pod("keystone-db-sync-a", 0, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "keystone-db-sync",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
			Message: "CRITICAL keystone [-] Unhandled error: (pymysql.err.OperationalError) (1045, \"Access denied for user 'keystone'\")\nmore"}}}}})
	pulling := pod("keystone-db-sync-b", time.Minute, corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "keystone-db-sync",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image \"keystone:next\""}}}}})
	glance := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack"},
		Spec: keystonev1.KeystoneServiceSpec{ServiceName: "glance", ServiceUser: "glance"},
		Status: keystonev1.KeystoneServiceStatus{Conditions: lc.Conditions{
			cond("Ready", "False", "Init", lc.SeverityInfo, "KeystoneAPIReady (0/6 ready): KeystoneAPI keystone is not ready"),
			cond("KeystoneAPIReady", "False", "Init", lc.SeverityInfo, "KeystoneAPI keystone is not ready"),
		}}}

	ready := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "other", UID: "api-2"},
		Status: keystonev1.KeystoneAPIStatus{Conditions: lc.Conditions{
			cond("Ready", "True", "Ready", "", "all 14 steps ready"),
			cond("DeploymentReady", "True", "Ready", "", "1 of 1 pods ready"),
		}}}
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "other",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "keystone.openstack.org/v1beta1", Kind: "KeystoneAPI", Name: "keystone", UID: "api-2"}}},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"service": "keystone"}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 1}}
	apiPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "keystone-7d9-x", Namespace: "other", Labels: map[string]string{"service": "keystone"}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "keystone-api", RestartCount: 2}}}}
	acGlance := &keystonev1.KeystoneApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: "ac-glance", Namespace: "openstack"},
		Spec: keystonev1.KeystoneApplicationCredentialSpec{UserName: "glance"}}
	return []client.Object{blocked, job, bootstrap, failed, pulling, glance, acGlance, ready, deployment, apiPod}
}

func fakeCloud(funcs *interceptor.Funcs) client.Client {
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cloud()...).
		WithStatusSubresource(&keystonev1.KeystoneAPI{}, &keystonev1.KeystoneService{})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

// TestTree: each way a user asks for the tree, against a fake client of the cloud
// above, and what it prints.
func TestTree(t *testing.T) {
	kubeconfig(t)
	for _, tc := range []struct {
		name string
		args []string
		// want are lines (or parts of them) the output has; notWant parts it has not.
		want, notWant []string
	}{{
		name: "the namespace of the kubeconfig's context, the Job the blocking step waits on with its last failed pod",
		args: []string{"tree"},
		want: []string{
			"KeystoneAPI/keystone  Ready=False Info Created: DBSyncReady (8/14 ready)",
			"▶ DBSyncReady=False Info Created 5m: job keystone-db-sync running (1 failed attempts so far)  ◀ blocking",
			"├─ Job/keystone-db-sync (1 active, 1 failed; last failed pod keystone-db-sync-a: container keystone-db-sync Error (exit code 1): " +
				"CRITICAL keystone [-] Unhandled error: (pymysql.err.OperationalError) (1045, \"Access denied for user 'keystone'\"); " +
				"pod keystone-db-sync-b waiting: container keystone-db-sync ImagePullBackOff: Back-off pulling image \"keystone:next\")",
			"└─ KeystoneService/glance  Ready=False Info Init",
		},
		notWant: []string{"keystone-bootstrap", "more", "Namespace/"},
	}, {
		name:    "-n names the namespace",
		args:    []string{"tree", "-n", "other"},
		want:    []string{"KeystoneAPI/keystone  Ready=True Ready: all 14 steps ready"},
		notWant: []string{"Deployment/", "glance"},
	}, {
		name: "-A draws every namespace",
		args: []string{"tree", "-A"},
		want: []string{"Namespace/openstack\n└─ KeystoneAPI/keystone  Ready=False", "Namespace/other", "└─ KeystoneAPI/keystone  Ready=True"},
	}, {
		name: "-o wide draws every condition, Job, Deployment and pod",
		args: []string{"tree", "-o", "wide", "--namespace=other"},
		want: []string{
			"· DeploymentReady=True Ready 5m: 1 of 1 pods ready",
			"Deployment/keystone (ready 1/1, up to date 1)",
			"Pod/keystone-7d9-x (Running, ready, 2 restarts, node node-1)",
		},
	}, {
		name: "-o wide with a Job shows both Jobs and the pods",
		args: []string{"tree", "-owide"},
		want: []string{"Job/keystone-bootstrap (0 active, 0 failed)", "Pod/keystone-db-sync-a (Failed, container keystone-db-sync Error (exit code 1)",
			"· DeploymentReady=Unknown Init 5m: waiting for DBSyncReady"},
	}, {
		name:    "a subtree, flags after it as kubectl takes them",
		args:    []string{"tree", "keystoneservice/glance", "-n", "openstack", "--show-conditions", "all"},
		want:    []string{"KeystoneService/glance  Ready=False Info Init", "▶ KeystoneAPIReady=False Info Init 5m: KeystoneAPI keystone is not ready  ◀ blocking"},
		notWant: []string{"KeystoneAPI/keystone"},
	}, {
		name:    "TYPE NAME, the type by its short name",
		args:    []string{"tree", "appcred", "ac-glance"},
		want:    []string{"KeystoneApplicationCredential/ac-glance"},
		notWant: []string{"KeystoneAPI/keystone"},
	}, {
		name:    "TYPE/NAME, the type by its short name, as the CRD's shortNames give it",
		args:    []string{"tree", "appcred/ac-glance"},
		want:    []string{"KeystoneApplicationCredential/ac-glance"},
		notWant: []string{"KeystoneAPI/keystone"},
	}, {
		name:    "the type qualified by its group",
		args:    []string{"tree", "keystoneservices.keystone.openstack.org/glance"},
		want:    []string{"KeystoneService/glance  Ready=False Info Init"},
		notWant: []string{"KeystoneAPI/keystone"},
	}, {
		name:    "the type by its kind, with version and group",
		args:    []string{"tree", "KeystoneService.v1beta1.keystone.openstack.org", "glance"},
		want:    []string{"KeystoneService/glance  Ready=False Info Init"},
		notWant: []string{"KeystoneAPI/keystone"},
	}, {
		name: "-o jsonpath",
		args: []string{"tree", "-A", "-o", `jsonpath={range .items[*]}{.name}:{range .children[*]}{.kind}/{.name} {end}{"\n"}{end}`},
		want: []string{"openstack:KeystoneAPI/keystone \nother:KeystoneAPI/keystone \n"},
	}, {
		name: "-o go-template",
		args: []string{"tree", "-o", "go-template={{range .items}}{{.kind}} {{.ready.status}}{{end}}"},
		want: []string{"KeystoneAPI False"},
	}, {
		name: "-o yaml",
		args: []string{"tree", "-o", "yaml"},
		want: []string{"apiVersion: v1\nitems:\n- children:\n  - kind: Job\n", "kind: List\n"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := runWith(fakeCloud(nil), tc.args...)
			g.Expect(r.err).NotTo(HaveOccurred())
			g.Expect(r.errOut).To(BeEmpty())
			for _, w := range tc.want {
				g.Expect(r.out).To(ContainSubstring(w))
			}
			for _, w := range tc.notWant {
				g.Expect(r.out).NotTo(ContainSubstring(w))
			}
		})
	}
}

// TestTreeJSON: -o json is a v1 List of the top nodes, [] for an empty namespace.
func TestTreeJSON(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	r := runWith(fakeCloud(nil), "tree", "-o", "json")
	g.Expect(r.err).NotTo(HaveOccurred())
	var list struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []struct {
			Kind, Name string
			Children   []struct{ Kind, Name, Note string }
		} `json:"items"`
	}
	g.Expect(json.Unmarshal([]byte(r.out), &list)).To(Succeed())
	g.Expect(list.APIVersion + "/" + list.Kind).To(Equal("v1/List"))
	g.Expect(list.Items).To(HaveLen(1))
	g.Expect(list.Items[0].Children[0].Note).To(HavePrefix("1 active, 1 failed; last failed pod keystone-db-sync-a"))

	r = runWith(fakeCloud(nil), "tree", "-n", "empty", "-o", "json")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(MatchJSON(`{"apiVersion": "v1", "kind": "List", "items": []}`))
	r = runWith(fakeCloud(nil), "tree", "-n", "empty")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(BeEmpty())
	g.Expect(r.errOut).To(Equal("No resources found in empty namespace.\n"), "as kubectl get says it, on stderr")
}

// TestHelp: help, asked for in any of kubectl's ways, is printed on stdout and is no
// error (exit 0), with kubectl's flags and the plugin's name as kubectl shows it.
func TestHelp(t *testing.T) {
	g := NewWithT(t)
	for _, args := range [][]string{{}, {"--help"}, {"-h"}, {"help"}, {"tree", "--help"}, {"help", "tree"}, {"handback", "-h"}} {
		r := runWith(nil, args...)
		g.Expect(r.err).NotTo(HaveOccurred(), "%v", args)
		g.Expect(r.out).To(ContainSubstring("kubectl keystone"), "%v: usage on stdout", args)
		g.Expect(r.out).To(ContainSubstring("-n, --namespace string"), "%v", args)
		g.Expect(r.out).To(ContainSubstring("--as string"), "%v", args)
	}
	r := runWith(nil, "tree", "-h")
	g.Expect(r.out).To(ContainSubstring("-A, --all-namespaces"))
	g.Expect(r.out).To(ContainSubstring("-o, --output string"))
	g.Expect(r.out).NotTo(ContainSubstring("show-managed-fields"))
	g.Expect(r.out).To(MatchRegexp(`--request-timeout string +.*A value of zero means don't timeout requests. \(default "30s"\)`),
		"the bound that applies, in kubectl's help")
}

// TestRequestTimeout: --request-timeout bounds each request as kubectl's help says: 30s
// unless given, a duration or a number of seconds, 0 for no bound; the requests to
// Keystone (release-cluster) alike.
func TestRequestTimeout(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	for flag, want := range map[string]time.Duration{"": 30 * time.Second, "--request-timeout=5s": 5 * time.Second,
		"--request-timeout=7": 7 * time.Second, "--request-timeout=0": 0} {
		p := newPlugin(genericiooptions.IOStreams{Out: io.Discard, ErrOut: io.Discard}, nil, nil)
		cmd := p.command()
		cmd.SetArgs(append([]string{"tree", "--help"}, strings.Fields(flag)...))
		g.Expect(cmd.Execute()).To(Succeed())
		cfg, err := p.config.ToRESTConfig()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Timeout).To(Equal(want), "%q: each request to the cluster", flag)
		g.Expect(p.keystoneTimeout()).To(Equal(want), "%q: each request to Keystone", flag)
	}
}

// TestRefusals: what the plugin refuses, and the messages it refuses with, before it
// reads anything.
func TestRefusals(t *testing.T) {
	kubeconfig(t)
	for wantErr, args := range map[string][]string{
		`unknown command "describe" for "kubectl keystone"`:                                            {"describe"},
		"handback takes no TYPE NAME, not [keystoneservice/glance]: it hands back the whole namespace": {"handback", "keystoneservice/glance"},
		`--show-conditions "some": blocking or all`:                                                    {"tree", "--show-conditions", "some"},
		`-o "name": ` + outputFormats:                                                                  {"tree", "-o", "name"},
		"accepts at most 2 arg(s), received 3":                                                         {"tree", "a", "b", "c"},
		"keystoneservice/glance names one object: give its namespace with -n, not -A":                  {"tree", "-A", "keystoneservice/glance"},
		"keystoneservice: give TYPE NAME or TYPE/NAME, for example keystoneservice glance":             {"tree", "keystoneservice"},
		`the server doesn't have a resource type "nosuchtype"`:                                         {"tree", "nosuchtype", "x"},
		"tree draws Keystone objects, and po is a Pod: give one of KeystoneAPI, KeystoneService, " +
			"KeystoneEndpoint, KeystoneApplicationCredential": {"tree", "po/keystone-0"},
		"unknown shorthand flag: 'x' in -x": {"tree", "-x"},
	} {
		r := runWith(nil, args...)
		NewWithT(t).Expect(said(r.err).text).To(Equal("error: "+wantErr), "%v", args)
	}
}

// TestConnectionFlags: kubectl's connection flags reach the client's configuration:
// --as impersonates, --context and --kubeconfig choose the cluster, -n the namespace.
func TestConnectionFlags(t *testing.T) {
	path := kubeconfig(t)
	g := NewWithT(t)
	r := runWith(fakeCloud(nil), "tree", "--as", "alice", "--as-group", "auditors", "--kubeconfig", path, "--context", "x", "-n", "other")
	g.Expect(r.err).NotTo(HaveOccurred())
	cfg, err := r.config.ToRESTConfig()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal("https://127.0.0.1:6443"))
	g.Expect(cfg.Impersonate.UserName).To(Equal("alice"))
	g.Expect(cfg.Impersonate.Groups).To(Equal([]string{"auditors"}))

	r = runWith(nil, "tree", "--context", "nowhere")
	g.Expect(r.err).To(MatchError(ContainSubstring(`context was not found for specified context: nowhere`)))

	// A server that does not answer, reached with the real client.
	var out, errOut bytes.Buffer
	cmd := newCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, connect, mapper)
	cmd.SetArgs([]string{"tree", "-s", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "5s"})
	g.Expect(said(cmd.Execute())).To(Equal(kubectlSaid{"The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?", 1}),
		"kubectl's words")

	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	g.Expect(said(configured(genericclioptions.NewConfigFlags(true)))).To(Equal(kubectlSaid{
		"error: no configuration has been provided, try setting KUBERNETES_MASTER environment variable", 1}),
		"client-go's words for no kubeconfig, as kubectl says them")
}

// kubectlSaid is what the plugin prints on an error, and exits with.
type kubectlSaid struct {
	text string
	code int
}

// said is what kubectl keystone prints for err, and exits with, as main has kubectl's
// cmdutil.CheckErr say it.
func said(err error) kubectlSaid {
	var out kubectlSaid
	cmdutil.BehaviorOnFatal(func(text string, code int) { out = kubectlSaid{strings.TrimSuffix(text, "\n"), code} })
	defer cmdutil.DefaultBehaviorOnFatal()
	cmdutil.CheckErr(asKubectl(err))
	return out
}

// TestErrorsSaid: no CRDs, a forbidden list and a forbidden Secret, each said in
// kubectl's words; a forbidden Secret or Job list leaves the rest of the tree drawn.
func TestErrorsSaid(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "keystone.openstack.org", Kind: "KeystoneAPI"}}
	r := runWith(fakeCloud(&interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return noMatch
	}}), "tree")
	g.Expect(said(r.err)).To(Equal(kubectlSaid{`error: the server doesn't have a resource type "keystoneapis"`, 1}),
		"as kubectl get keystoneapis says it")

	forbidden := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("no"))
	}
	r = runWith(fakeCloud(&interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return forbidden("keystoneapis")
	}}), "tree")
	g.Expect(said(r.err)).To(Equal(kubectlSaid{`Error from server (Forbidden): keystoneapis is forbidden: no`, 1}), "kubectl's words")

	r = runWith(fakeCloud(&interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if _, jobs := l.(*batchv1.JobList); jobs {
			return forbidden("jobs")
		}
		return c.List(ctx, l, opts...)
	}}), "tree")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(ContainSubstring("├─ Workloads/jobs (not readable (forbidden to you))"))
	g.Expect(r.out).To(ContainSubstring("└─ KeystoneService/glance"))
	g.Expect(strings.Count(r.out, "\n")).To(BeNumerically(">", 3))
}

// TestHandBackDryRun: with kubectl's --dry-run=client the hand-back prints what it would
// change and changes nothing, with server the API server checks each change and keeps
// none; with none (the default) the changes are made and a second run finds nothing.
func TestHandBackDryRun(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	ctx := context.Background()
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack",
		Finalizers: []string{"keystone.openstack.org/keystoneservice"}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(svc).
		WithIndex(&coordinationv1.Lease{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).Build()
	r := runWith(c, "handback", "--dry-run=client")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(Equal("namespace openstack: would change (dry run):\n" +
		"  KeystoneService/glance: remove finalizers keystone.openstack.org/keystoneservice; add keystone-operator's openstack.org/keystoneservice\n"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"keystone.openstack.org/keystoneservice"}), "a dry run changes nothing")
	r = runWith(c, "handback", "--dry-run=server")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(HavePrefix("namespace openstack: would change (server dry run: the API server accepted each change, and kept none):\n"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"keystone.openstack.org/keystoneservice"}), "a server dry run keeps nothing")
	r = runWith(c, "handback", "--dry-run=maybe")
	g.Expect(r.err).To(MatchError(`Invalid dry-run value (maybe). Must be "none", "server", or "client".`), "kubectl's words")

	r = runWith(c, "handback", "-n", "openstack")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(HavePrefix("namespace openstack: changed:\n"))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"openstack.org/keystoneservice"}))
	r = runWith(c, "handback", "--dry-run=none")
	g.Expect(r.out).To(Equal("namespace openstack: nothing of this operator's is left; keystone-operator can run\n"))
}

// TestHandBackRefusedWhileLeading: while an operator holds the leader election lease the
// hand-back refuses to apply (the operator would put its finalizers back), and a dry run
// warns; once the lease has lapsed it applies. A registration being deleted is said to
// leave its registration in Keystone.
func TestHandBackRefusedWhileLeading(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	ctx := context.Background()
	deleting := metav1.Now()
	svc := &keystonev1.KeystoneService{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: "openstack",
		Finalizers: []string{"keystone.openstack.org/keystoneservice"}, DeletionTimestamp: &deleting},
		Spec:   keystonev1.KeystoneServiceSpec{ServiceUser: "glance"},
		Status: keystonev1.KeystoneServiceStatus{ServiceID: "4a7f"}}
	holder, renewed := "keystone-operator-controller-manager-5d9_1f2e", metav1.NewMicroTime(time.Now().Add(-3*time.Second))
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack-operators", Name: handback.LeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &renewed, LeaseDurationSeconds: ptr.To[int32](137)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(svc, lease).
		WithIndex(&coordinationv1.Lease{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).Build()

	for _, dryRun := range []string{"none", "server"} {
		r := runWith(c, "handback", "--dry-run="+dryRun)
		g.Expect(r.err).To(MatchError(ContainSubstring("lease openstack-operators/6012128b.openstack.org is held by " + holder)))
	}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(svc), svc)).To(Succeed())
	g.Expect(svc.Finalizers).To(Equal([]string{"keystone.openstack.org/keystoneservice"}), "nothing changed")

	r := runWith(c, "handback", "--dry-run=client")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.errOut).To(HavePrefix("warning: lease openstack-operators/6012128b.openstack.org is held by"))
	g.Expect(r.out).To(ContainSubstring("KeystoneService/glance: remove finalizers keystone.openstack.org/keystoneservice; " +
		"being deleted, it then goes without removing from Keystone service 4a7f and user glance"))

	// The lease lapsed: the operator is stopped.
	lapsed := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(Succeed())
	lease.Spec.RenewTime = &lapsed
	g.Expect(c.Update(ctx, lease)).To(Succeed())
	r = runWith(c, "handback", "--lease-namespace", "openstack-operators")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(HavePrefix("namespace openstack: changed:\n"))
}

// TestReleaseCluster: release-cluster says, then does, what taking a cluster gone for good
// out of the namespace's Keystone changes, with the KeystoneAPI's admin credentials.
func TestReleaseCluster(t *testing.T) {
	kubeconfig(t)
	g := NewWithT(t)
	ks := fakekeystone.New("admin", "secret-admin")
	defer ks.Close()
	user := ks.Create(fakekeystone.Users, map[string]any{"name": "nova", "domain_id": "default",
		"keystone_operator_owner": "KeystoneService/openstack/nova/uid-3@gone-cluster"})
	api := &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret", AdminUser: "admin", AdminProject: "admin",
			PasswordSelectors: keystonev1.PasswordSelector{Admin: "AdminPassword"}},
		Status: keystonev1.KeystoneAPIStatus{APIEndpoints: map[string]string{"internal": "http://unreachable.svc:5000"}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "osp-secret", Namespace: "openstack"},
		Data: map[string][]byte{"AdminPassword": []byte("secret-admin")}}
	here := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: identity.ClusterConfigMap, Namespace: "openstack-operators"},
		Data: map[string]string{identity.ClusterKey: "this-cluster"}}
	kubeSystem := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "kube-system-uid"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(api, secret, here, kubeSystem).WithStatusSubresource(api).
		WithIndex(&corev1.ConfigMap{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).Build()

	r := runWith(c, "release-cluster", "this-cluster", "--keystone-url", ks.URL, "--apply")
	g.Expect(r.err).To(MatchError(HavePrefix("this-cluster is this cluster's identity (ConfigMap openstack-operators/"+
		identity.ClusterConfigMap+")")), "a live cluster is never released")
	r = runWith(c, "release-cluster", "kube-system-uid", "--keystone-url", ks.URL, "--apply")
	g.Expect(r.err).To(MatchError(HavePrefix("kube-system-uid is this cluster's identity (the UID of namespace kube-system)")),
		"nor by the identity an operator without its ConfigMap goes by")
	r = runWith(c, "release-cluster", "gone-cluster", "--keystone-url", ks.URL)
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(r.out).To(Equal("Keystone at " + ks.URL + ", cluster gone-cluster: would change (dry run; --apply changes it):\n" +
		"  user nova (" + user + "): deleted\n"))
	g.Expect(ks.List(fakekeystone.Users, map[string]any{"name": "nova"})).To(HaveLen(1), "a dry run changes nothing")
	r = runWith(c, "release-cluster", "gone-cluster", "--keystone-url", ks.URL, "--apply")
	g.Expect(r.err).NotTo(HaveOccurred())
	g.Expect(ks.List(fakekeystone.Users, map[string]any{"name": "nova"})).To(BeEmpty())
	r = runWith(c, "release-cluster", "gone-cluster", "--keystone-url", ks.URL)
	g.Expect(r.out).To(Equal("Keystone at " + ks.URL + ": nothing of cluster gone-cluster is left\n"))
}
