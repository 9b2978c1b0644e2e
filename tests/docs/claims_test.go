package docs

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/controllers/keystoneapi"
	"github.com/keystone-stepwise/keystone-operator/controllers/registration"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// numberClaim is a number a page says, found by a pattern whose groups capture it,
// and what the code has for each group.
type numberClaim struct {
	page, pattern, what string
	want                []int64
}

// TestDocumentedNumbers: the numbers the kind pages give for the operator's defaults
// and bounds (the startup probe, the drain, the jobs' attempts, the orphan grace's
// companions, intervals) are the code's. A sentence reworded so that its pattern no
// longer finds it fails too: reword the pattern with it.
func TestDocumentedNumbers(t *testing.T) {
	root := repoRoot(t)
	seconds := func(d time.Duration) int64 { return int64(d / time.Second) }
	claims := []numberClaim{
		{"docs/keystoneapi.md", `startup probe: at most (\d+) attempts`, "the startup probe's attempts (deploy.StartupSeconds)",
			[]int64{int64(deploy.StartupSeconds)}},
		{"docs/keystoneapi.md", `startup probe: at most \d+ attempts, at\s+most one a second, each waiting up to (\d+) s`,
			"the startup probe's timeout (deploy.StartupProbeTimeout)", []int64{int64(deploy.StartupProbeTimeout)}},
		{"docs/keystoneapi.md", `about (\d+) s while nothing\s+listens, up to about ([\d,]+) s if every attempt timed out`,
			"the startup probe's bounds (StartupSeconds, times StartupProbeTimeout)",
			[]int64{int64(deploy.StartupSeconds), int64(deploy.StartupSeconds) * int64(deploy.StartupProbeTimeout)}},
		{"docs/keystoneapi.md", `keeps\s+serving for (\d+) s \(the preStop hook; the operator's ` + "`--api-drain-seconds`",
			"the drain (deploy.DrainSeconds)", []int64{deploy.DrainSeconds}},
		{"docs/keystoneapi.md", `new connections still reach it, up to (\d+) s`, "serving alone (deploy.ServeAloneSeconds)",
			[]int64{deploy.ServeAloneSeconds}},
		{"docs/keystoneapi.md", `(\d+) s without a new connection ends this`, "the quiet time (deploy.QuietSeconds)",
			[]int64{deploy.QuietSeconds}},
		{"docs/conditions.md", `for (\d+) s after the write`, "how long a status write's copy is used (reconciler.WrittenCopyLifetime)",
			[]int64{int64(reconciler.WrittenCopyLifetime / time.Second)}},
		{"docs/keystoneapi.md", "the drain \\+ (\\d+) s \\+ `apiTimeout` \\+ (\\d+) s \\((\\d+) by\\s+default\\)",
			"the API pods' grace period (deploy.StopGraceSeconds)", []int64{deploy.ServeAloneSeconds, deploy.StopMarginSeconds,
				deploy.StopGraceSeconds(&keystonev1.KeystoneAPI{}, deploy.DrainSeconds)}},
		{"docs/keystoneapi.md", `unreachable database after (\d+) retries (\d+) s apart`,
			"db-sync's database retries (deploy.JobDBRetries, JobDBRetryInterval)", []int64{deploy.JobDBRetries, deploy.JobDBRetryInterval}},
		{"docs/keystoneapi.md", `the Job makes (\d+) attempts, within a (\d+)-minute deadline`,
			"a job's attempts and deadline (deploy.JobBackoffLimit + 1, JobDeadlineSeconds)",
			[]int64{int64(deploy.JobBackoffLimit) + 1, deploy.JobDeadlineSeconds / 60}},
		{"docs/keystoneapi.md", `From (\d+) replicas on, the PodDisruptionBudget`, "the PodDisruptionBudget's threshold (deploy.PDBMinReplicas)",
			[]int64{int64(deploy.PDBMinReplicas)}},
		{"docs/keystoneapi.md", `both are re-read every (\d+) s, not watched`, "the network attachments' re-read (keystoneapi.NetworkRecheckInterval)",
			[]int64{seconds(keystoneapi.NetworkRecheckInterval)}},
		{"docs/keystoneapi.md", `at most once per (\d+) s\s+\(` + "`RegistrationsViewInterval`", "the registrations' view (keystoneapi.RegistrationsViewInterval)",
			[]int64{seconds(keystoneapi.RegistrationsViewInterval)}},
		{"docs/monitoring.md", `Events dropped because (\d+) were already waiting`, "the Events' queue (reconciler.MaxPendingEvents)",
			[]int64{reconciler.MaxPendingEvents}},
		{"docs/keystoneapi.md", `changed none of its inputs \((\d+) minutes at\s+most\)`, "the external check's reuse (keystoneapi.ExternalConfirmInterval)",
			[]int64{int64(keystoneapi.ExternalConfirmInterval / time.Minute)}},
		{"docs/keystoneservice.md", "`--orphan-grace` \\((\\d+) minutes by default\\)", "the orphan grace (registration.DefaultOrphanGrace)",
			[]int64{int64(registration.DefaultOrphanGrace / time.Minute)}},
		{"docs/keystoneservice.md", `lets its registrations try for (\d+) minutes`, "a teardown's bound (registration.OrphanAfter)",
			[]int64{int64(registration.OrphanAfter / time.Minute)}},
	}
	for _, c := range claims {
		checkNumbers(t, root, c)
	}
}

// checkNumbers checks that c's page says c.want where c.pattern finds it.
func checkNumbers(t *testing.T, root string, c numberClaim) {
	t.Helper()
	text := readAll(t, root, c.page)
	re := regexp.MustCompile(c.pattern)
	m := re.FindStringSubmatchIndex(text)
	if m == nil {
		t.Errorf("%s no longer says %s where this test looks for it (%s): say it again, or move the pattern with the sentence",
			c.page, c.what, c.pattern)
		return
	}
	if len(m)/2-1 != len(c.want) {
		t.Fatalf("pattern %s captures %d numbers, want %d", c.pattern, len(m)/2-1, len(c.want))
	}
	line := strings.Count(text[:m[0]], "\n") + 1
	for i, want := range c.want {
		said, err := strconv.ParseInt(strings.ReplaceAll(text[m[2*i+2]:m[2*i+3]], ",", ""), 10, 64)
		if err != nil {
			t.Errorf("%s:%d: %s: %v", c.page, line, c.what, err)
			continue
		}
		if said != want {
			t.Errorf("%s:%d: says %d for %s; the code has %d: fix the doc", c.page, line, said, c.what, want)
		}
	}
}

// TestRecordFormats: the records the operator writes into Keystone are documented as the
// code writes them: keystone_operator_password_from (access.PasswordSource) and
// keystone_operator_owner (identity.OwnerMark), built here from placeholders. Every
// occurrence in the README and docs/ must match, and docs/keystoneservice.md must show both.
func TestRecordFormats(t *testing.T) {
	root := repoRoot(t)
	password := access.PasswordSource(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{UID: "<uid>", ResourceVersion: "<resourceVersion>"}}, "<key>")
	mark := func(kind string) string {
		return identity.OwnerMark(kind, &metav1.ObjectMeta{Namespace: "<namespace>", Name: "<name>", UID: "<uid>"}, "<cluster>")
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]int{}
	for _, path := range append(pages, filepath.Join(root, "README.md")) {
		rel, _ := filepath.Rel(root, path)
		text := readAll(t, root, rel)
		for _, m := range regexp.MustCompile("`("+identity.PasswordFromAttribute+"|"+identity.OwnerAttribute+`): ([^`+"`"+`]*)`+"`").
			FindAllStringSubmatchIndex(text, -1) {
			attribute, said := text[m[2]:m[3]], text[m[4]:m[5]]
			line := strings.Count(text[:m[0]], "\n") + 1
			want := password
			if attribute == identity.OwnerAttribute {
				kind, _, _ := strings.Cut(said, "/")
				want = mark(kind)
			}
			if said != want {
				t.Errorf("%s:%d: gives %s as %s; the code writes %s: fix the doc", rel, line, attribute, said, want)
			}
			if rel == filepath.Join("docs", "keystoneservice.md") {
				shown[attribute]++
			}
		}
	}
	for _, attribute := range []string{identity.PasswordFromAttribute, identity.OwnerAttribute} {
		if shown[attribute] == 0 {
			t.Errorf("docs/keystoneservice.md no longer shows the record `%s: ...`: show it, as the code writes it", attribute)
		}
	}
}

// TestOverlayPermissions: docs/install.md's table of what each overlay grants
// cluster-wide is what `kustomize build` renders: the ClusterRoles that
// ClusterRoleBindings grant the operator's ServiceAccount, and the ClusterRoles no
// binding names.
func TestOverlayPermissions(t *testing.T) {
	root := repoRoot(t)
	const page = "docs/install.md"
	text := readAll(t, root, page)
	_, section, found := strings.Cut(text, "\n### What each overlay grants cluster-wide\n")
	if !found {
		t.Fatalf("%s has no section \"What each overlay grants cluster-wide\": where did the overlays' permissions go?", page)
	}
	offset := strings.Count(text[:len(text)-len(section)], "\n")
	section, _, _ = strings.Cut(section, "\n#")
	rows := tableRows(section, "| `config/")
	if len(rows) < 2 {
		t.Fatalf("%s: the overlays' table has %d rows; want config/default and config/namespaced at least", page, len(rows))
	}
	kustomize := controlplane.Kustomize(t, root)
	for _, row := range rows {
		overlay := strings.Trim(row.cells[0], "`")
		line := offset + row.line
		if len(row.cells) != 3 {
			t.Errorf("%s:%d: the row of %s has %d cells, want 3", page, line, overlay, len(row.cells))
			continue
		}
		bound, unbound := renderedClusterRoles(t, kustomize, filepath.Join(root, overlay))
		for i, got := range [][]string{bound, unbound} {
			what := []string{"bound to the operator cluster-wide", "bound to nobody"}[i]
			said := backquoted(row.cells[1+i])
			if missing := minus(got, said); len(missing) > 0 {
				t.Errorf("%s:%d: kustomize build %s renders ClusterRoles %s %s, which the row does not name: add them",
					page, line, overlay, strings.Join(missing, ", "), what)
			}
			if extra := minus(said, got); len(extra) > 0 {
				t.Errorf("%s:%d: the row of %s names %s as %s, which kustomize build %s does not render so: remove them",
					page, line, overlay, strings.Join(extra, ", "), what, overlay)
			}
		}
	}
}

// rbacRef is a role binding's roleRef or subject.
type rbacRef struct{ Kind, Name, Namespace string }

// rbacObject is what renderedClusterRoles reads of a rendered object.
type rbacObject struct {
	Kind     string
	Metadata struct{ Name string }
	RoleRef  rbacRef   `json:"roleRef"`
	Subjects []rbacRef `json:"subjects"`
}

// grantsOperator tells whether obj is a ClusterRoleBinding with the operator's
// ServiceAccount among its subjects.
func (obj rbacObject) grantsOperator() bool {
	if obj.Kind != "ClusterRoleBinding" {
		return false
	}
	for _, s := range obj.Subjects {
		if s.Kind == "ServiceAccount" && s.Name == controlplane.OperatorServiceAccount && s.Namespace == controlplane.OperatorNamespace {
			return true
		}
	}
	return false
}

// renderedClusterRoles are the ClusterRoles `kustomize build overlay` renders that a
// ClusterRoleBinding grants the operator's ServiceAccount, and those no binding names.
func renderedClusterRoles(t *testing.T, kustomize, overlay string) (bound, unbound []string) {
	t.Helper()
	out, err := exec.Command(kustomize, "build", overlay).Output()
	if err != nil {
		var stderr []byte
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			stderr = exit.Stderr
		}
		t.Fatalf("kustomize build %s: %v: %s", overlay, err, stderr)
	}
	roles := map[string]bool{}
	named := map[string]bool{}
	boundSet := map[string]bool{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var obj rbacObject
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("kustomize build %s: %v", overlay, err)
		}
		switch obj.Kind {
		case "ClusterRole":
			roles[obj.Metadata.Name] = true
		case "ClusterRoleBinding", "RoleBinding":
			if obj.RoleRef.Kind != "ClusterRole" {
				continue
			}
			named[obj.RoleRef.Name] = true
			if obj.grantsOperator() {
				boundSet[obj.RoleRef.Name] = true
			}
		}
	}
	if len(roles) == 0 {
		t.Fatalf("kustomize build %s rendered no ClusterRole: the parse is broken", overlay)
	}
	for name := range roles {
		if !named[name] {
			unbound = append(unbound, name)
		}
	}
	for name := range boundSet {
		bound = append(bound, name)
	}
	sort.Strings(bound)
	sort.Strings(unbound)
	return bound, unbound
}

// backquoted are the `names` in cell.
func backquoted(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// minus is a without the elements of b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		found := false
		for _, y := range b {
			found = found || x == y
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}
