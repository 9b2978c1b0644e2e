package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// prometheusOperator is the module whose CRDs (example/prometheus-operator-crd) the
// test installs: the ServiceMonitor and PrometheusRule schemas the API server checks
// config/prometheus against.
const prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

const (
	operatorNamespace = "keystone-operator-system"
	// The job the Prometheus Operator gives a ServiceMonitor's targets (the Service's
	// name), which the alerts of config/prometheus select.
	metricsJob = "keystone-stepwise-controller-manager-metrics-service"
	// kubePrometheusStackRelease is the Helm release name `helm install
	// kube-prometheus-stack prometheus-community/kube-prometheus-stack` gives: its
	// Prometheus selects ServiceMonitors and PrometheusRules labelled release: <name>
	// (the chart's templates/prometheus/prometheus.yaml, serviceMonitorSelector and
	// ruleSelector while *SelectorNilUsesHelmValues is true, its default).
	kubePrometheusStackRelease = "kube-prometheus-stack"
)

var (
	serviceMonitors = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitorList"}
	prometheusRules = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PrometheusRuleList"}
)

// prometheusOperatorCRDs downloads the Prometheus Operator's module (the Go module
// cache keeps it) and returns its ServiceMonitor and PrometheusRule CRD files.
func prometheusOperatorCRDs(t *testing.T) []string {
	t.Helper()
	module, err := controlplane.ModuleDir(".", prometheusOperator)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(module, "example", "prometheus-operator-crd")
	return []string{filepath.Join(dir, "monitoring.coreos.com_servicemonitors.yaml"), filepath.Join(dir, "monitoring.coreos.com_prometheusrules.yaml")}
}

// endpoint is the part of a ServiceMonitor endpoint this test turns into Prometheus'
// configuration as the Prometheus Operator does. Decoded strictly: a field added to
// config/prometheus that the translation does not know fails the test rather than
// being scraped without it.
type endpoint struct {
	Port          string `json:"port"`
	Scheme        string `json:"scheme"`
	Path          string `json:"path"`
	HonorLabels   bool   `json:"honorLabels"`
	Authorization *struct {
		Type        string `json:"type"`
		Credentials struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"credentials"`
	} `json:"authorization"`
	TLSConfig *struct {
		InsecureSkipVerify bool `json:"insecureSkipVerify"`
	} `json:"tlsConfig"`
}

// TestServiceMonitorScrapedByPrometheus follows docs/monitoring.md on a cluster with
// kube-prometheus-stack's selectors: config/default and config/kube-prometheus-stack
// applied with kubectl, the operator running with config/rbac's permissions, and a
// real Prometheus scraping it with what the ServiceMonitor says (its Service's port,
// scheme, path, TLS and the scraper account's token) until `up` is 1 and the
// operator's series are there with their own namespace. Only the operator's metrics
// Service is selected, not another kubebuilder operator's; a token without the
// metrics-reader binding, or none, is refused (up 0).
//
// What a cluster does that envtest lacks is done here in its place, and only that:
// the token controller fills the scraper's token Secret (a TokenRequest for the same
// account), and the Prometheus Operator's translation of the ServiceMonitor is
// endpoint's (the target is the manager's address, as the Service's endpoints would be).
func TestServiceMonitorScrapedByPrometheus(t *testing.T) {
	g := NewWithT(t)
	root, err := controlplane.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	prometheus, err := exec.LookPath("prometheus")
	if err != nil {
		err = &controlplane.MissingError{What: "prometheus (Debian's prometheus package)", Run: "hack/debian-deps.sh monitoring"}
	}
	if controlplane.Unavailable(t, err) {
		return
	}
	cp := controlplane.Start(t, root, prometheusOperatorCRDs(t)...)
	cfg, kubeconfig, kubectl := cp.Config, cp.Kubeconfig, cp.Kubectl
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{Scheme: manager.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// docs/monitoring.md's steps.
	for _, dir := range []string{"config/default", "config/kube-prometheus-stack"} {
		cmd := exec.Command(kubectl, "apply", "-k", filepath.Join(root, dir))
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply -k %s: %v\n%s", dir, err, out)
		}
	}

	// What kube-prometheus-stack's Prometheus selects: our ServiceMonitor and rules.
	release := client.MatchingLabels{"release": kubePrometheusStackRelease}
	monitors := &unstructured.UnstructuredList{}
	monitors.SetGroupVersionKind(serviceMonitors)
	g.Expect(c.List(ctx, monitors, release)).To(Succeed())
	g.Expect(monitors.Items).To(HaveLen(1), "ServiceMonitors kube-prometheus-stack selects")
	rules := &unstructured.UnstructuredList{}
	rules.SetGroupVersionKind(prometheusRules)
	g.Expect(c.List(ctx, rules, release)).To(Succeed())
	g.Expect(rules.Items).To(HaveLen(1), "PrometheusRules kube-prometheus-stack selects")
	monitor := monitors.Items[0]
	g.Expect(monitor.GetNamespace()).To(Equal(operatorNamespace))

	// The Services it selects in its namespace: the operator's, not another
	// kubebuilder operator's beside it.
	other := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "other-controller-manager-metrics-service", Namespace: operatorNamespace,
		Labels: map[string]string{"control-plane": "controller-manager"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8443}}, Selector: map[string]string{"control-plane": "controller-manager"}}}
	g.Expect(c.Create(ctx, other)).To(Succeed())
	matchLabels, _, err := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	g.Expect(err).NotTo(HaveOccurred())
	services := &corev1.ServiceList{}
	g.Expect(c.List(ctx, services, client.InNamespace(operatorNamespace), client.MatchingLabels(matchLabels))).To(Succeed())
	g.Expect(services.Items).To(HaveLen(1))
	service := services.Items[0]
	g.Expect(service.Name).To(Equal(metricsJob))
	// ... and the Service selects the operator's pods.
	podLabels, managerArgs, err := managerPod(ctx, c)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(labels.SelectorFromSet(service.Spec.Selector).Matches(labels.Set(podLabels))).To(BeTrue(),
		"the metrics Service's selector %v matches the operator's pods %v", service.Spec.Selector, podLabels)

	ep := serviceMonitorEndpoint(t, monitor)
	var port *corev1.ServicePort
	for i := range service.Spec.Ports {
		if service.Spec.Ports[i].Name == ep.Port {
			port = &service.Spec.Ports[i]
		}
	}
	g.Expect(port).NotTo(BeNil(), "the Service has the ServiceMonitor's port %q", ep.Port)
	g.Expect(managerArgs).To(ContainElement(fmt.Sprintf("--metrics-bind-address=:%d", port.TargetPort.IntValue())),
		"the manager serves metrics on the Service's target port")
	g.Expect(managerArgs).NotTo(ContainElement("--metrics-secure=false"))

	// The token controller's part: the scraper's token in its Secret.
	g.Expect(ep.Authorization).NotTo(BeNil())
	clientset, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	tokenSecret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: ep.Authorization.Credentials.Name}, tokenSecret)).To(Succeed())
	g.Expect(tokenSecret.Type).To(Equal(corev1.SecretTypeServiceAccountToken))
	scraper := tokenSecret.Annotations[corev1.ServiceAccountNameKey]
	tokenFor := func(account string) string {
		tr, err := clientset.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, account, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}
	tokenSecret.Data = map[string][]byte{ep.Authorization.Credentials.Key: []byte(tokenFor(scraper))}
	g.Expect(c.Update(ctx, tokenSecret)).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "unbound", Namespace: operatorNamespace}})).To(Succeed())

	// The operator, with config/rbac's permissions, and a KeystoneAPI for it to report on.
	metricsAddr := freeAddress(t)
	opCfg, err := controlplane.AsOperator(ctx, cfg, root)
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := manager.New(opCfg, manager.Options{MetricsAddr: metricsAddr, MetricsSecure: true, ProbeAddr: "0",
		ClusterID: "prometheus-test", LeaderElectionNamespace: operatorNamespace})
	g.Expect(err).NotTo(HaveOccurred())
	mctx, stop := context.WithCancel(ctx) //nolint:gosec // called in the deferred function below
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	// Stopped before the API server (t.Cleanup's env.Stop runs after the deferred calls).
	defer func() { stop(); <-done }()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openstack"}})).To(Succeed())
	g.Expect(c.Create(ctx, &keystonev1.KeystoneAPI{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: keystonev1.KeystoneAPISpec{Secret: "osp-secret", DatabaseInstance: "openstack"}})).To(Succeed())

	// Prometheus: the ServiceMonitor's job, and the same with a token refused and with none.
	dir := t.TempDir()
	writeToken := func(name, token string) string {
		path := filepath.Join(dir, name)
		g.Expect(os.WriteFile(path, []byte(token), 0o600)).To(Succeed())
		return path
	}
	jobs := []map[string]any{
		scrapeJob(ep, metricsJob, metricsAddr, writeToken("scraper", string(tokenSecret.Data[ep.Authorization.Credentials.Key]))),
		scrapeJob(ep, "unbound", metricsAddr, writeToken("unbound", tokenFor("unbound"))),
		scrapeJob(ep, "anonymous", metricsAddr, ""),
	}
	promConfig, err := yaml.Marshal(map[string]any{"global": map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s"}, "scrape_configs": jobs})
	g.Expect(err).NotTo(HaveOccurred())
	configFile := filepath.Join(dir, "prometheus.yml")
	g.Expect(os.WriteFile(configFile, promConfig, 0o600)).To(Succeed())
	promAddr := freeAddress(t)
	var promLog bytes.Buffer
	prom := exec.Command(prometheus, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	prom.Stdout, prom.Stderr = &promLog, &promLog
	g.Expect(prom.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s\nits configuration:\n%s", promLog.String(), promConfig)
		}
	})

	query := func(q string) (float64, error) { return instantQuery(promAddr, q) }
	// Each bounded by 60 s: Prometheus starting, scraping every second, and the operator
	// reporting the KeystoneAPI's conditions.
	g.Eventually(func() (float64, error) { return query(`up{job="` + metricsJob + `"}`) }, time.Minute, time.Second).
		Should(Equal(1.0), "the ServiceMonitor's job scraped (up)")
	g.Eventually(func() (float64, error) {
		return query(`count(keystone_operator_condition{job="` + metricsJob + `",kind="KeystoneAPI",namespace="openstack",name="keystone"})`)
	}, time.Minute, time.Second).Should(BeNumerically(">", 0), "the KeystoneAPI's conditions, with their own namespace")
	for _, refused := range []string{"unbound", "anonymous"} {
		g.Eventually(func() (float64, error) { return query(`up{job="` + refused + `"}`) }, time.Minute, time.Second).
			Should(Equal(0.0), "a scrape as %s is refused", refused)
	}
	g.Expect(targetError(promAddr, "unbound")).To(ContainSubstring("403"))
	g.Expect(targetError(promAddr, "anonymous")).To(ContainSubstring("401"))
}

// serviceMonitorEndpoint decodes the ServiceMonitor's only endpoint, strictly.
func serviceMonitorEndpoint(t *testing.T, monitor unstructured.Unstructured) endpoint {
	t.Helper()
	endpoints, _, err := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	if err != nil || len(endpoints) != 1 {
		t.Fatalf("the ServiceMonitor has %d endpoints (%v), want 1", len(endpoints), err)
	}
	raw, err := json.Marshal(endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ep endpoint
	if err := dec.Decode(&ep); err != nil {
		t.Fatalf("the ServiceMonitor's endpoint %s: %v (teach this test the new field)", raw, err)
	}
	return ep
}

// scrapeJob is the Prometheus Operator's scrape configuration for ep, as it writes it
// for a ServiceMonitor's endpoint: scheme, path, honor_labels, the TLS settings, the
// authorization's credentials (from tokenFile here; none when empty) and the Service's
// name as the job label, with the target the Service's endpoints would give.
func scrapeJob(ep endpoint, job, target, tokenFile string) map[string]any {
	config := map[string]any{
		"job_name":       job,
		"scheme":         ep.Scheme,
		"metrics_path":   ep.Path,
		"honor_labels":   ep.HonorLabels,
		"static_configs": []map[string]any{{"targets": []string{target}, "labels": map[string]string{"job": job}}},
	}
	if ep.TLSConfig != nil {
		config["tls_config"] = map[string]any{"insecure_skip_verify": ep.TLSConfig.InsecureSkipVerify}
	}
	if tokenFile != "" && ep.Authorization != nil {
		config["authorization"] = map[string]any{"type": ep.Authorization.Type, "credentials_file": tokenFile}
	}
	return config
}

// instantQuery evaluates q on the Prometheus at addr and returns its one value; an
// error while there is none.
func instantQuery(addr, q string) (float64, error) {
	var answer struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := getJSON("http://"+addr+"/api/v1/query?query="+url.QueryEscape(q), &answer); err != nil {
		return 0, err
	}
	if len(answer.Data.Result) != 1 {
		return 0, fmt.Errorf("%s: %d series", q, len(answer.Data.Result))
	}
	var v float64
	s, _ := answer.Data.Result[0].Value[1].(string)
	_, err := fmt.Sscan(s, &v)
	return v, err
}

// targetError is the last scrape error of job's target on the Prometheus at addr.
func targetError(addr, job string) (string, error) {
	var answer struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string `json:"scrapePool"`
				LastError  string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := getJSON("http://"+addr+"/api/v1/targets", &answer); err != nil {
		return "", err
	}
	for _, target := range answer.Data.ActiveTargets {
		if target.ScrapePool == job {
			return target.LastError, nil
		}
	}
	return "", fmt.Errorf("no target of job %s", job)
}

func getJSON(address string, into any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", address, resp.Status, body)
	}
	return json.Unmarshal(body, into)
}

// freeAddress returns 127.0.0.1:port with a port nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// managerPod returns the labels of the operator's pods and the manager container's
// command and arguments, as config/default installed its Deployment.
func managerPod(ctx context.Context, c client.Client) (map[string]string, []string, error) {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: deployment}, d); err != nil {
		return nil, nil, err
	}
	for _, container := range d.Spec.Template.Spec.Containers {
		if container.Name == "manager" {
			return d.Spec.Template.Labels, append(append([]string{}, container.Command...), container.Args...), nil
		}
	}
	return nil, nil, fmt.Errorf("deployment %s has no manager container", deployment)
}
