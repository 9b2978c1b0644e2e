package functional

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/keystone-stepwise/keystone-operator/cmd/manager"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
)

// freePort returns a TCP port on 127.0.0.1 that nothing listens on.
func freePort() int {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	port := l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	return port
}

var _ = Describe("The secure metrics endpoint (--metrics-secure)", func() {
	It("answers only callers Kubernetes authenticates and authorizes for GET /metrics", func() {
		ns := newNamespace()
		port := freePort()
		// The manager's own options, on a manager of its own: the endpoint as it is served.
		mgr, err := ctrl.NewManager(testEnv.Config, ctrl.Options{Scheme: manager.Scheme, HealthProbeBindAddress: "0",
			Metrics: manager.MetricsServerOptions(manager.Options{MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), MetricsSecure: true})})
		Expect(err).NotTo(HaveOccurred())
		mctx, stop := context.WithCancel(context.Background())
		DeferCleanup(stop)
		go func() {
			defer GinkgoRecover()
			Expect(mgr.Start(mctx)).To(Succeed())
		}()

		// The endpoint's certificate is self-signed: this test checks who may read, not TLS.
		httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
		get := func(token string) (int, string) {
			req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), nil)
			Expect(err).NotTo(HaveOccurred())
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			body, _ := io.ReadAll(resp.Body)
			Expect(resp.Body.Close()).To(Succeed())
			return resp.StatusCode, string(body)
		}
		Eventually(func() int { code, _ := get(""); return code }).Should(Equal(http.StatusUnauthorized), "anonymous")

		clientset, err := kubernetes.NewForConfig(testEnv.Config)
		Expect(err).NotTo(HaveOccurred())
		tokenOf := func(name string) string {
			GinkgoHelper()
			Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})).To(Succeed())
			tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			return tr.Status.Token
		}
		stranger := tokenOf("stranger")
		Eventually(func() int { code, _ := get(stranger); return code }).Should(Equal(http.StatusForbidden), "authenticated, not authorized")

		// A second account, allowed GET /metrics as config/rbac/metrics_reader_role.yaml allows it
		// (the filter caches the first one's refusal).
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: ns}}}
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8sClient.Delete(context.Background(), binding)).To(Succeed())
			Expect(k8sClient.Delete(context.Background(), role)).To(Succeed())
		})
		token := tokenOf("prometheus")
		Eventually(func(g Gomega) {
			code, body := get(token)
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(body).To(ContainSubstring("controller_runtime_reconcile_total"))
		}).Should(Succeed())
	})
})
