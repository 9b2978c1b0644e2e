// Command kubectl-keystone is the kubectl plugin `kubectl keystone`: with the binary on
// PATH, `kubectl keystone tree [-n NS] [KIND/NAME]` draws a namespace's KeystoneAPI, its
// steps (the blocking one marked), its registrations and their credentials' Secrets.
// It only reads the API, so it shows keystone-operator's objects too.
// `kubectl keystone handback [-n NS] [--apply]` hands a namespace back to keystone-operator
// once this operator is stopped (internal/handback); without --apply it only says what
// it would change.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	"github.com/keystone-stepwise/keystone-operator/internal/tree"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

const usage = `kubectl keystone: the Keystone objects of a namespace at a glance.

Usage:
  kubectl keystone tree [-n NAMESPACE] [KIND/NAME] [--show-conditions blocking|all] [-o text|json|yaml]
  kubectl keystone handback [-n NAMESPACE] [--apply]

tree draws each KeystoneAPI, its steps (the one it waits on marked), its KeystoneServices,
their KeystoneEndpoints and application credentials, and the credentials' Secrets with
the consumers whose finalizers hold them. KIND/NAME (keystoneservice/glance, ...) draws
that object's subtree alone. --show-conditions blocking (the default) draws the step each
object waits on and every condition failing with a Warning or Error; all draws every one.

handback, run once this operator is stopped and before keystone-operator runs again,
removes this operator's finalizers and annotations from the namespace's objects and puts
keystone-operator's own finalizers where its controllers keep them, so that
keystone-operator deletes everything as if it had never been replaced. It prints each
change; without --apply it changes nothing (a dry run).

Flags:
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl keystone:", explain(err))
		os.Exit(1)
	}
}

// explain is err as a user can act on it: the Keystone CRDs missing from the cluster
// (client-go's "no matches for kind"), or a request the user may not make.
func explain(err error) string {
	switch {
	case meta.IsNoMatchError(err):
		return "the Keystone CRDs are not installed in this cluster (kubectl get crd keystoneapis.keystone.openstack.org): " + err.Error()
	case apierrors.IsForbidden(err):
		return "forbidden: your user may not read this (kubectl auth can-i list keystoneapis -n <namespace>): " + err.Error()
	}
	return err.Error()
}

// options are what the command line asks for.
type options struct {
	command, namespace, show, output, kubeconfig, kubeContext, target string
	apply                                                             bool
}

func run(args []string, stdout, stderr io.Writer) error {
	opts, err := parse(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = opts.kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return err
	}
	if opts.namespace == "" {
		if opts.namespace, _, err = loader.Namespace(); err != nil {
			return err
		}
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(keystonev1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if opts.command == "handback" {
		return handBack(ctx, c, opts, stdout)
	}
	nodes, err := tree.Build(ctx, c, opts.namespace, opts.target, tree.Show(opts.show))
	if err != nil {
		return err
	}
	if nodes == nil {
		nodes = []*tree.Node{} // [] in JSON and YAML, not null
	}
	switch {
	case opts.output == "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(nodes)
	case opts.output == "yaml":
		data, err := yaml.Marshal(nodes)
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	case len(nodes) == 0:
		_, err := fmt.Fprintf(stdout, "no Keystone objects in namespace %s\n", opts.namespace)
		return err
	}
	return tree.Render(stdout, nodes, time.Now())
}

// handBack prints what handing the namespace back to keystone-operator changes, and
// changes it with --apply.
func handBack(ctx context.Context, c client.Client, opts options, stdout io.Writer) error {
	changes, err := handback.Plan(ctx, c, opts.namespace)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintf(stdout, "namespace %s: nothing of this operator's is left; keystone-operator can run\n", opts.namespace)
		return err
	}
	verb := "would change (dry run; --apply changes it)"
	if opts.apply {
		if err := handback.Apply(ctx, c, changes); err != nil {
			return err
		}
		verb = "changed"
	}
	if _, err := fmt.Fprintf(stdout, "namespace %s: %s:\n", opts.namespace, verb); err != nil {
		return err
	}
	for _, ch := range changes {
		if _, err := fmt.Fprintln(stdout, "  "+ch.String()); err != nil {
			return err
		}
	}
	return nil
}

// parse reads the command line: tree or handback, its flags, and for tree at most one
// KIND/NAME. Asked for help (help, -h, --help) it prints the usage on stdout and returns
// flag.ErrHelp.
func parse(args []string, stdout, stderr io.Writer) (options, error) {
	var opts options
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		_, _ = fmt.Fprint(stdout, usage)
		return opts, flag.ErrHelp
	}
	if len(args) == 0 || (args[0] != "tree" && args[0] != "handback") {
		_, _ = fmt.Fprint(stderr, usage)
		return opts, errors.New("the commands are tree and handback")
	}
	opts.command = args[0]
	flags := flag.NewFlagSet("kubectl keystone "+opts.command, flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() { _, _ = fmt.Fprint(stderr, usage); flags.PrintDefaults() }
	if slices.ContainsFunc(args[1:], func(a string) bool { return a == "-h" || a == "--help" || a == "-help" }) {
		flags.SetOutput(stdout)
		_, _ = fmt.Fprint(stdout, usage)
		flags.PrintDefaults()
		return opts, flag.ErrHelp
	}
	flags.StringVar(&opts.namespace, "n", "", "the namespace (default: the kubeconfig context's)")
	flags.StringVar(&opts.namespace, "namespace", "", "the namespace (default: the kubeconfig context's)")
	flags.StringVar(&opts.show, "show-conditions", string(tree.ShowBlocking), "blocking or all")
	flags.StringVar(&opts.output, "o", "text", "text, json or yaml")
	flags.StringVar(&opts.output, "output", "text", "text, json or yaml")
	flags.StringVar(&opts.kubeconfig, "kubeconfig", "", "the kubeconfig (default: KUBECONFIG, then ~/.kube/config)")
	flags.StringVar(&opts.kubeContext, "context", "", "the kubeconfig context")
	if opts.command == "handback" {
		flags.BoolVar(&opts.apply, "apply", false, "make the changes (without it, a dry run)")
	}
	if err := flags.Parse(interleaved(args[1:], flags)); err != nil {
		return opts, err
	}
	if err := opts.check(flags.Args()); err != nil {
		return opts, err
	}
	opts.target = flags.Arg(0)
	return opts, nil
}

// check refuses what parse read and cannot do; args are the positional arguments.
func (opts options) check(args []string) error {
	switch {
	case opts.show != string(tree.ShowBlocking) && opts.show != string(tree.ShowAll):
		return fmt.Errorf("--show-conditions %q: blocking or all", opts.show)
	case opts.output != "text" && opts.output != "json" && opts.output != "yaml":
		return fmt.Errorf("-o %q: text, json or yaml", opts.output)
	case opts.command == "handback" && len(args) > 0:
		return fmt.Errorf("handback takes no KIND/NAME, not %v: it hands back the whole namespace", args)
	case len(args) > 1:
		return fmt.Errorf("one KIND/NAME at most, not %v", args)
	}
	return nil
}

// interleaved moves flags after the positional argument before it, as kubectl accepts
// `tree keystoneservice/glance -n openstack`.
func interleaved(args []string, flags *flag.FlagSet) []string {
	var opts, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			opts = append(opts, a)
			name := a[1:]
			if len(name) > 0 && name[0] == '-' {
				name = name[1:]
			}
			if f := flags.Lookup(name); f != nil && i+1 < len(args) && !strings.Contains(a, "=") {
				opts = append(opts, args[i+1])
				i++
			}
			continue
		}
		positional = append(positional, a)
	}
	return append(opts, positional...)
}
