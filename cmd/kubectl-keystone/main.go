// Command kubectl-keystone is the kubectl plugin `kubectl keystone`: with the binary on
// PATH (or installed by krew), `kubectl keystone tree [-n NS | -A] [KIND/NAME]` draws a
// namespace's KeystoneAPI, its steps (the blocking one marked) and the Jobs or
// Deployment that step waits on, its registrations and their credentials' Secrets. It
// only reads the API, so it shows keystone-operator's objects too.
// `kubectl keystone handback [-n NS] [--dry-run=none|client|server]` hands a namespace
// back to keystone-operator once this operator is stopped (internal/handback).
//
// It takes kubectl's connection flags (k8s.io/cli-runtime's genericclioptions:
// --kubeconfig, --context, -n, --as, --server, ...) and kubectl's output formats
// (cli-runtime's printers: json, yaml, jsonpath, go-template), with cobra for the
// commands and help.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/handback"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	"github.com/keystone-stepwise/keystone-operator/internal/tree"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// now is the time the tree's ages are drawn from; the tests fix it.
var now = time.Now

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	if err := newCommand(streams, connect, mapper).Execute(); err != nil {
		// Said, and exited with, as kubectl says and exits with it.
		cmdutil.CheckErr(asKubectl(err))
	}
}

// requestTimeout bounds each request to the cluster (and to Keystone) unless
// --request-timeout says otherwise (0: no bound, as kubectl's help says).
const requestTimeout = "30s"

// asKubectl is err as kubectl's own commands hand it to cmdutil.CheckErr, so that it is
// worded as kubectl words it: the API server's status (Forbidden, NotFound: "Error from
// server (...)"), a server that cannot be reached ("The connection to the server ... was
// refused", "Unable to connect to the server: ..."), a kind the server does not serve
// ("the server doesn't have a resource type ..."), a missing configuration; the context
// this plugin adds (what it was listing) gives way to those words.
func asKubectl(err error) error {
	var status apierrors.APIStatus
	var unreachable *url.Error
	var noKind *meta.NoKindMatchError
	var noResource *meta.NoResourceMatchError
	switch {
	case errors.As(err, &status):
		return status.(error)
	case errors.As(err, &unreachable):
		return unreachable
	case errors.As(err, &noResource):
		return noSuchType(noResource.PartialResource.Resource)
	case errors.As(err, &noKind):
		// A list of one of the Keystone kinds, whose CRD the cluster lacks.
		return noSuchType(strings.ToLower(noKind.GroupKind.Kind) + "s")
	}
	return err
}

// noSuchType is kubectl get's error for a type the server does not serve.
func noSuchType(resource string) error {
	return fmt.Errorf("the server doesn't have a resource type %q", resource)
}

// connector makes the client for kubectl's connection flags; tests give a fake one.
type connector func(*genericclioptions.ConfigFlags) (client.Client, error)

// mapperFor resolves the types kubectl's names stand for, through the cluster's
// discovery (short names, singulars, kinds, group-qualified names); tests give a fixed one.
type mapperFor func(*genericclioptions.ConfigFlags) (meta.RESTMapper, error)

// mapper is the cluster's, as kubectl reads it (cached discovery, short names expanded).
func mapper(config *genericclioptions.ConfigFlags) (meta.RESTMapper, error) {
	if err := configured(config); err != nil {
		return nil, err
	}
	return config.ToRESTMapper()
}

// connect is the client of the cluster the flags name, as kubectl would reach it.
func connect(config *genericclioptions.ConfigFlags) (client.Client, error) {
	if err := configured(config); err != nil {
		return nil, err
	}
	cfg, err := config.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// configured refuses to go on without a cluster: no kubeconfig, no --server and not in
// a pod, where client-go would try http://localhost:8080.
func configured(config *genericclioptions.ConfigFlags) error {
	if config.APIServer != nil && *config.APIServer != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil
	}
	raw, err := config.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return err
	}
	if len(raw.Clusters) == 0 {
		return clientcmd.ErrEmptyConfig
	}
	return nil
}

// scheme holds the kinds the plugin reads: Kubernetes' own and the Keystone kinds.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(keystonev1.AddToScheme(s))
	return s
}()

// plugin is what every command shares: the streams, kubectl's connection flags and
// the way to a client.
type plugin struct {
	streams genericiooptions.IOStreams
	config  *genericclioptions.ConfigFlags
	connect connector
	mapper  mapperFor
}

// newCommand is `kubectl keystone` with its commands tree, handback and release-cluster.
func newCommand(streams genericiooptions.IOStreams, connect connector, mapper mapperFor) *cobra.Command {
	return newPlugin(streams, connect, mapper).command()
}

// newPlugin is the plugin's state before its flags are read.
func newPlugin(streams genericiooptions.IOStreams, connect connector, mapper mapperFor) *plugin {
	p := &plugin{streams: streams, config: genericclioptions.NewConfigFlags(true), connect: connect, mapper: mapper}
	// A default bound on every command's requests, shown in the flag's help.
	p.config.Timeout = ptr.To(requestTimeout)
	return p
}

// command is `kubectl keystone` with its commands, bound to p.
func (p *plugin) command() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-keystone",
		Short: "The Keystone objects of a namespace at a glance",
		Long: `kubectl keystone: the Keystone objects of a namespace at a glance, and the way
back to keystone-operator.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl keystone"},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(p.streams.Out)
	root.SetErr(p.streams.ErrOut)
	p.config.AddFlags(root.PersistentFlags())
	root.AddCommand(p.treeCommand(), p.handbackCommand(), p.releaseClusterCommand())
	return root
}

// do runs work with the namespace the flags or the kubeconfig's context name, a client
// of the cluster, and a context bounded by timeout.
func (p *plugin) do(work func(ctx context.Context, c client.Client, ns string) error) error {
	ns, _, err := p.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	c, err := p.connect(p.config)
	if err != nil {
		return err
	}
	// Each request is bounded by --request-timeout, which the client carries, as
	// kubectl's are.
	return work(context.Background(), c, ns)
}

// treeOptions are tree's own flags.
type treeOptions struct {
	allNamespaces bool
	show, output  string
	jsonYaml      *genericclioptions.JSONYamlPrintFlags
	template      *genericclioptions.KubeTemplatePrintFlags
}

const treeExample = `  # The KeystoneAPI of namespace openstack, its blocking step and what that step waits on
  kubectl keystone tree -n openstack

  # One registration's subtree, every condition drawn (any name kubectl takes for the type:
  # keystoneservice glance, keystoneservices.keystone.openstack.org/glance, appcred/ac-glance)
  kubectl keystone tree keystoneservice glance -n openstack --show-conditions all

  # Every namespace; every condition, Job, Deployment and pod
  kubectl keystone tree -A -o wide

  # The steps each object waits on, for a script
  kubectl keystone tree -n openstack -o jsonpath='{range .items[*]}{.kind}/{.name}{"\n"}{end}'`

func (p *plugin) treeCommand() *cobra.Command {
	o := &treeOptions{jsonYaml: genericclioptions.NewJSONYamlPrintFlags(), template: genericclioptions.NewKubeTemplatePrintFlags()}
	cmd := &cobra.Command{
		Use:   "tree [TYPE NAME | TYPE/NAME]",
		Short: "Draw the KeystoneAPI, its steps, the workloads it waits on and its registrations",
		Long: `tree draws each KeystoneAPI, its steps (the one it waits on marked), the Job or
Deployment that step waits on (a Job with its last failed pod's reason, a Deployment with
its ready and desired pods), its KeystoneServices, their KeystoneEndpoints and application
credentials, and the credentials' Secrets with the consumers whose finalizers hold them.

TYPE NAME or TYPE/NAME draws that object's subtree alone, TYPE named as kubectl takes it
(resource, singular, short name or kind, optionally with its group: keystoneservice,
keystoneservices.keystone.openstack.org, appcred, KeystoneApplicationCredential).
--show-conditions blocking (the default) draws the step each object waits on and every
condition failing with a Warning or Error; all draws every one. -o wide draws every
condition and every Job, Deployment and pod the KeystoneAPI owns. -o json, yaml, jsonpath
and go-template print the tree as a v1 List of its top nodes.`,
		Example: treeExample,
		Args:    cobra.MaximumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return p.tree(o, args)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "draw every namespace holding a Keystone object")
	cmd.Flags().StringVar(&o.show, "show-conditions", string(tree.ShowBlocking), "blocking (the step waited on, and failing conditions) or all")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", outputFormats)
	o.jsonYaml.AddFlags(cmd)
	o.template.AddFlags(cmd)
	// The tree's nodes have no managedFields to keep.
	_ = cmd.Flags().MarkHidden("show-managed-fields")
	return cmd
}

// textual says whether the output is drawn as text (the default, or wide).
func (o *treeOptions) textual() bool {
	return o.output == "" || o.output == "text" || o.output == "wide"
}

// check refuses what tree cannot do before it reads anything.
func (o *treeOptions) check(args []string) error {
	switch {
	case o.show != string(tree.ShowBlocking) && o.show != string(tree.ShowAll):
		return fmt.Errorf("--show-conditions %q: blocking or all", o.show)
	case o.allNamespaces && len(args) > 0:
		return fmt.Errorf("%s names one object: give its namespace with -n, not -A", strings.Join(args, " "))
	case o.textual():
		return nil
	}
	_, err := o.printer()
	return err
}

func (p *plugin) tree(o *treeOptions, args []string) error {
	if err := o.check(args); err != nil {
		return err
	}
	target, err := p.target(args)
	if err != nil {
		return err
	}
	return p.do(func(ctx context.Context, c client.Client, ns string) error { return p.drawTree(ctx, c, ns, o, target) })
}

// target is the object args name (TYPE NAME or TYPE/NAME; none for no args), its type
// resolved as kubectl resolves it (kindOf).
func (p *plugin) target(args []string) (*tree.Target, error) {
	var typ, name string
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		var named bool
		if typ, name, named = strings.Cut(args[0], "/"); !named || name == "" {
			return nil, fmt.Errorf("%s: give TYPE NAME or TYPE/NAME, for example keystoneservice glance", args[0])
		}
	default:
		if strings.Contains(args[0], "/") {
			return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl keystone tree resource/<resource_name>' instead of 'kubectl keystone tree resource resource/<resource_name>')")
		}
		typ, name = args[0], args[1]
	}
	m, err := p.mapper(p.config)
	if err != nil {
		return nil, err
	}
	gvk, err := kindOf(m, typ)
	if err != nil {
		return nil, err
	}
	if gvk.Group != keystonev1.GroupVersion.Group || !slices.Contains(tree.Kinds, gvk.Kind) {
		return nil, fmt.Errorf("tree draws Keystone objects, and %s is a %s: give one of %s", typ, gvk.Kind, strings.Join(tree.Kinds, ", "))
	}
	return &tree.Target{Kind: gvk.Kind, Name: name}, nil
}

// kindOf is the kind typ names, as kubectl reads a type: a resource (plural, singular or
// short name, which mapper's discovery expands), or a kind; either with its version and
// group (keystoneservices.v1beta1.keystone.openstack.org) or group alone. Unknown, the
// mapper's NoResourceMatchError, which kubectl words "the server doesn't have a
// resource type".
func kindOf(mapper meta.RESTMapper, typ string) (schema.GroupVersionKind, error) {
	full, partial := schema.ParseResourceArg(typ)
	if full != nil {
		if gvk, err := mapper.KindFor(*full); err == nil {
			return gvk, nil
		}
	}
	gvk, byResource := mapper.KindFor(partial.WithVersion(""))
	if byResource == nil {
		return gvk, nil
	}
	fullKind, partialKind := schema.ParseKindArg(typ)
	for _, k := range []*schema.GroupVersionKind{fullKind, ptr.To(partialKind.WithVersion(""))} {
		if k == nil || k.Kind == "" {
			continue
		}
		var versions []string
		if k.Version != "" {
			versions = append(versions, k.Version)
		}
		if mapping, err := mapper.RESTMapping(k.GroupKind(), versions...); err == nil {
			return mapping.GroupVersionKind, nil
		}
	}
	return schema.GroupVersionKind{}, byResource
}

// drawTree prints namespace ns's tree, or every namespace's (-A), as o asks; nothing to
// draw is said on stderr, as kubectl get says it.
func (p *plugin) drawTree(ctx context.Context, c client.Client, ns string, o *treeOptions, target *tree.Target) error {
	opts := tree.Options{Show: tree.Show(o.show), Wide: o.output == "wide"}
	var nodes []*tree.Node
	var err error
	if o.allNamespaces {
		nodes, err = tree.BuildAll(ctx, c, opts)
	} else {
		nodes, err = tree.Build(ctx, c, ns, target, opts)
	}
	if err != nil {
		return err
	}
	out := p.streams.Out
	switch {
	case !o.textual():
		return o.print(p.streams.Out, nodes)
	case len(nodes) == 0 && o.allNamespaces:
		_, err := fmt.Fprintln(p.streams.ErrOut, "No resources found")
		return err
	case len(nodes) == 0:
		_, err := fmt.Fprintf(p.streams.ErrOut, "No resources found in %s namespace.\n", ns)
		return err
	}
	return tree.Render(out, nodes, now())
}

func (p *plugin) handbackCommand() *cobra.Command {
	leaseNamespace := ""
	cmd := &cobra.Command{
		Use:   "handback",
		Short: "Hand a namespace back to keystone-operator",
		Long: `handback, run once this operator is stopped and before keystone-operator runs again,
removes this operator's finalizers and annotations from the namespace's objects and puts
keystone-operator's own finalizers where its controllers keep them, so that
keystone-operator deletes everything as if it had never been replaced. It prints each
change. With --dry-run=client it changes nothing; with --dry-run=server the API server
checks every change without keeping it. It refuses to change anything while an operator
holds the leader election lease 6012128b.openstack.org (this one, or keystone-operator
already started): that operator would undo it. A registration being deleted loses this
operator's finalizer and goes without leaving Keystone: each change says what it leaves
valid there.`,
		Example: "  kubectl keystone handback -n openstack --dry-run=client   # what it would change\n" +
			"  kubectl keystone handback -n openstack",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("handback takes no TYPE NAME, not %v: it hands back the whole namespace", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			dryRun, err := cmdutil.GetDryRunStrategy(cmd)
			if err != nil {
				return err
			}
			return p.do(func(ctx context.Context, c client.Client, ns string) error {
				return p.handBack(ctx, c, ns, leaseNamespace, dryRun)
			})
		},
	}
	cmdutil.AddDryRunFlag(cmd)
	cmd.Flags().StringVar(&leaseNamespace, "lease-namespace", "", "the operator's namespace, where its leader election lease is "+
		"(default: looked for in every namespace)")
	return cmd
}

// handBack prints what handing namespace ns back to keystone-operator changes, and
// changes it (dryRun none; server: the API server checks each change and keeps none),
// unless an operator holds the leader election lease (looked for in leaseNamespace,
// every namespace when "").
func (p *plugin) handBack(ctx context.Context, c client.Client, ns, leaseNamespace string, dryRun cmdutil.DryRunStrategy) error {
	out := p.streams.Out
	if leaseErr := handback.CheckLease(ctx, c, leaseNamespace, time.Now()); leaseErr != nil {
		if dryRun != cmdutil.DryRunClient {
			return leaseErr
		}
		if _, err := fmt.Fprintf(p.streams.ErrOut, "warning: %v; handback refuses to change anything until then\n", leaseErr); err != nil {
			return err
		}
	}
	changes, err := handback.Plan(ctx, c, ns)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintf(out, "namespace %s: nothing of this operator's is left; keystone-operator can run\n", ns)
		return err
	}
	verb := "would change (dry run)"
	switch dryRun {
	case cmdutil.DryRunNone:
		if err := handback.Apply(ctx, c, changes); err != nil {
			return err
		}
		verb = "changed"
	case cmdutil.DryRunServer:
		if err := handback.Apply(ctx, client.NewDryRunClient(c), changes); err != nil {
			return err
		}
		verb = "would change (server dry run: the API server accepted each change, and kept none)"
	}
	if _, err := fmt.Fprintf(out, "namespace %s: %s:\n", ns, verb); err != nil {
		return err
	}
	for _, ch := range changes {
		if _, err := fmt.Fprintln(out, "  "+ch.String()); err != nil {
			return err
		}
	}
	return nil
}

func (p *plugin) releaseClusterCommand() *cobra.Command {
	apply := false
	keystoneURL := ""
	cmd := &cobra.Command{
		Use:   "release-cluster CLUSTER",
		Short: "Take a cluster gone for good out of what it registered in the namespace's Keystone (a dry run without --apply)",
		Long: `release-cluster takes CLUSTER, the identity of a control plane gone for good (its
ConfigMap keystone-operator-cluster-identity, or the @<cluster> of its marks), out of
every service, user and endpoint it registered in the Keystone of the namespace's
KeystoneAPI, with that KeystoneAPI's admin credentials: where other regions own an entity
too, it leaves them (a keeper hands it to the next); its endpoints, and what it owned
alone, are deleted, as its deletions would have. Nothing unmarked is touched. It prints
each change; without --apply it changes nothing (a dry run).`,
		Example: "  kubectl keystone release-cluster 2f1c0d9e-... -n openstack\n" +
			"  kubectl keystone release-cluster 2f1c0d9e-... -n openstack --apply --keystone-url https://keystone-public.example.com",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return p.do(func(ctx context.Context, c client.Client, ns string) error {
				return p.releaseCluster(ctx, c, ns, args[0], keystoneURL, apply)
			})
		},
	}
	cmd.Flags().BoolVar(&apply, "apply", false, "make the changes (without it, a dry run)")
	cmd.Flags().StringVar(&keystoneURL, "keystone-url", "", "Keystone's URL as reachable from here (default: the KeystoneAPI's internal endpoint)")
	return cmd
}

// releaseCluster prints what releasing cluster from the Keystone of namespace ns's
// KeystoneAPI changes, and changes it when apply.
func (p *plugin) releaseCluster(ctx context.Context, c client.Client, ns, cluster, keystoneURL string, apply bool) error {
	if err := p.notThisCluster(ctx, c, cluster); err != nil {
		return err
	}
	timeout, err := p.keystoneTimeout()
	if err != nil {
		return err
	}
	kc, url, err := access.Admin(ctx, c, ns, keystoneURL, timeout)
	if err != nil {
		return err
	}
	changes, err := kc.ReleaseCluster(ctx, cluster, apply)
	if err != nil {
		return err
	}
	out := p.streams.Out
	if len(changes) == 0 {
		_, err := fmt.Fprintf(out, "Keystone at %s: nothing of cluster %s is left\n", url, cluster)
		return err
	}
	verb := "would change (dry run; --apply changes it)"
	if apply {
		verb = "changed"
	}
	if _, err := fmt.Fprintf(out, "Keystone at %s, cluster %s: %s:\n", url, cluster, verb); err != nil {
		return err
	}
	for _, ch := range changes {
		if _, err := fmt.Fprintf(out, "  %s: %s\n", ch.Entity, ch.Action); err != nil {
			return err
		}
	}
	return nil
}

// keystoneTimeout bounds each request to Keystone as --request-timeout bounds those to
// the cluster.
func (p *plugin) keystoneTimeout() (time.Duration, error) {
	cfg, err := p.config.ToRESTConfig()
	if err != nil {
		return 0, err
	}
	return cfg.Timeout, nil
}

// notThisCluster refuses to release cluster when it is the identity of the cluster the
// plugin talks to, as an operator there would have made it: the identity an operator's
// ConfigMap identity.ClusterConfigMap keeps, or the UID of kube-system (the identity
// without that ConfigMap). That cluster is alive, and its registrations would be taken
// from under it. What cannot be read is said, not refused; an operator run with
// --cluster-id names its cluster itself, which the admin checks.
func (p *plugin) notThisCluster(ctx context.Context, c client.Client, cluster string) error {
	here := map[string]string{} // identity -> where it is kept
	var unread []string
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.MatchingFields{"metadata.name": identity.ClusterConfigMap}); err != nil {
		unread = append(unread, fmt.Sprintf("ConfigMaps %s: %v", identity.ClusterConfigMap, err))
	}
	for _, cm := range list.Items {
		here[cm.Data[identity.ClusterKey]] = "ConfigMap " + cm.Namespace + "/" + cm.Name
	}
	kubeSystem := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, kubeSystem); err != nil {
		unread = append(unread, fmt.Sprintf("namespace kube-system: %v", err))
	} else {
		here[string(kubeSystem.UID)] = "the UID of namespace kube-system"
	}
	if where, ok := here[cluster]; ok && cluster != "" {
		return fmt.Errorf("%s is this cluster's identity (%s): release-cluster is for a cluster gone for good, "+
			"run from another region's cluster; a live region leaves by deleting its KeystoneServices and KeystoneEndpoints",
			cluster, where)
	}
	for _, u := range unread {
		if _, err := fmt.Fprintf(p.streams.ErrOut, "warning: cannot read this cluster's identity (%s); make sure %s is not this cluster\n",
			u, cluster); err != nil {
			return err
		}
	}
	return nil
}
