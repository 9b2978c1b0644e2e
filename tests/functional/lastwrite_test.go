package functional

import (
	"context"
	"encoding/json"
	"sync"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statusWrites watches the KeystoneAPIs of ns and records each status a write left, in
// order, until the spec ends.
func statusWrites(ns string) func() []keystonev1.KeystoneAPIStatus {
	GinkgoHelper()
	c, err := client.NewWithWatch(testEnv.Config, client.Options{Scheme: k8sClient.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	w, err := c.Watch(context.Background(), &keystonev1.KeystoneAPIList{}, client.InNamespace(ns))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	var mu sync.Mutex
	var seen []keystonev1.KeystoneAPIStatus
	last := ""
	go func() {
		for ev := range w.ResultChan() {
			api, ok := ev.Object.(*keystonev1.KeystoneAPI)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			data, _ := json.Marshal(api.Status)
			mu.Lock()
			if string(data) != last {
				last = string(data)
				seen = append(seen, *api.Status.DeepCopy())
			}
			mu.Unlock()
		}
	}()
	return func() []keystonev1.KeystoneAPIStatus {
		mu.Lock()
		defer mu.Unlock()
		return append([]keystonev1.KeystoneAPIStatus(nil), seen...)
	}
}

var _ = Describe("The write that makes a KeystoneAPI Ready", func() {
	It("is the last of its rollout: no status write follows it", func() {
		ns := newNamespace()
		writes := statusWrites(ns)
		deployReady(ns)
		settledWrites(ns)
		all := writes()
		first := -1
		for i, st := range all {
			if c := st.Conditions.Get("Ready"); c != nil && c.Status == corev1.ConditionTrue {
				first = i
				break
			}
		}
		Expect(first).To(BeNumerically(">=", 0), "Ready was written")
		after := all[first+1:]
		diffs := []string{}
		for _, st := range after {
			a, _ := json.Marshal(all[first])
			b, _ := json.Marshal(st)
			diffs = append(diffs, string(a)+"\n  then\n"+string(b))
		}
		Expect(after).To(BeEmpty(), "status writes after the one that made it Ready:\n%v", diffs)
	})
})
