package keystoneapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"strings"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// phases lists the steps of a KeystoneAPI in declared order; RunPhases passes over
// the ones skipped for the spec. Every step whose objects can exist is observed every
// round: it reports them as they are, and acts (creates, renders, runs a job, rolls
// the pods) only once every step before it is True (scope.acting). The external
// endpoint check has nothing to observe but Keystone, with the admin's password.
func (r *Reconciler) phases() []reconciler.Phase[*scope] {
	return []reconciler.Phase[*scope]{
		{Step: keystonev1.KeystoneAPIInputReady, Run: r.reconcileInput, Observes: true},
		{Step: keystonev1.KeystoneAPIServiceAccountReady, Run: r.reconcileServiceAccount, Observes: true},
		{Step: keystonev1.KeystoneAPITLSInputReady, Run: r.reconcileTLS, Observes: true},
		{Step: keystonev1.KeystoneAPITopologyReady, Run: r.reconcileTopology, Observes: true},
		{Step: keystonev1.KeystoneAPIDBReady, Run: r.reconcileDatabase, Observes: true},
		{Step: keystonev1.KeystoneAPIMemcachedReady, Run: r.reconcileMemcached, Observes: true},
		{Step: keystonev1.KeystoneAPIRabbitMqTransportURLReady, Run: r.reconcileNotifications, Observes: true},
		{Step: keystonev1.KeystoneAPIServiceConfigReady, Run: r.reconcileConfig, Observes: true},
		{Step: keystonev1.KeystoneAPIFernetKeysReady, Run: r.reconcileFernetKeys, Observes: true},
		{Step: keystonev1.KeystoneAPIDBSyncReady, Run: r.reconcileDBSync, Observes: true},
		{Step: keystonev1.KeystoneAPIExposeServiceReady, Run: r.reconcileServices, Observes: true},
		{Step: keystonev1.KeystoneAPIBootstrapReady, Run: r.reconcileBootstrap, Observes: true},
		{Step: keystonev1.KeystoneAPIDeploymentReady, Run: r.reconcileDeployment, Observes: true},
		{Step: keystonev1.KeystoneAPINetworkAttachmentsReady, Run: r.reconcileNetworks, Observes: true},
		{Step: keystonev1.KeystoneAPICronJobReady, Run: r.reconcileTrustFlush, Observes: true},
		{Step: keystonev1.KeystoneAPIEndpointReady, Run: r.reconcileExternalEndpoint},
		{Step: keystonev1.KeystoneAPIOpenStackConfigReady, Run: r.reconcileOpenStackConfig, Observes: true},
	}
}

// acting tells whether step may act this round: every step before it is True.
func (s *scope) acting(step lc.Type) bool { return s.round.WaitingFor(step) == "" }

// afterwards says, for the message of a step observed while it may not act, when it acts again.
func (s *scope) afterwards(step lc.Type) string {
	return fmt.Sprintf("(updated once %s is True)", s.round.WaitingFor(step))
}

// written tells whether every object, named in its metadata, exists in the
// KeystoneAPI's namespace, reading each into obj. A step observed while it may not
// act reports True for what it wrote before, and nothing while it wrote nothing.
func (r *Reconciler) written(ctx context.Context, s *scope, objs ...client.Object) (bool, error) {
	for _, obj := range objs {
		if err := r.Get(ctx, client.ObjectKey{Namespace: s.api.Namespace, Name: obj.GetName()}, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
	}
	return true, nil
}

// reconcileInput marks InputReady: this is the namespace's first KeystoneAPI, its spec
// can make objects (deploy.SpecProblems), and the admin password Secret and key exist. Any other KeystoneAPI of the namespace is
// refused and the round halted: the database, the KeystoneServices and openstack-config
// are the namespace's, and its objects would be the first's.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
	list := &keystonev1.KeystoneAPIList{}
	if err := r.List(ctx, list, client.InNamespace(s.api.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing KeystoneAPIs: %w", err)
	}
	if first := access.First(list.Items); first != nil && first.UID != s.api.UID {
		s.round.MarkFalse(keystonev1.KeystoneAPIInputReady, condition.InvalidInput,
			"KeystoneAPI %s already deploys Keystone in namespace %s; one KeystoneAPI per namespace: delete this one",
			first.Name, s.api.Namespace)
		s.round.Halt()
		return ctrl.Result{}, nil
	}
	if problems := deploy.SpecProblems(s.api); len(problems) > 0 {
		s.round.MarkFalse(keystonev1.KeystoneAPIInputReady, condition.InvalidInput, "%s", strings.Join(problems, "; "))
		s.round.Halt()
		return ctrl.Result{}, nil
	}
	if pending := deploy.PendingEndpoints(s.api); len(pending) > 0 {
		s.round.MarkFalse(keystonev1.KeystoneAPIInputReady, condition.Requested,
			"waiting for a host in %s (openstack-operator sets it once its Route has one)", strings.Join(pending, " and "))
		s.round.Halt()
		return ctrl.Result{}, nil
	}
	spec := s.api.Spec
	password, found, err := r.secretValue(ctx, s.api.Namespace, spec.Secret, spec.PasswordSelectors.Admin)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found {
		s.round.MarkFalse(keystonev1.KeystoneAPIInputReady, condition.DependencyNotFound,
			"secret %s with key %s not found", spec.Secret, spec.PasswordSelectors.Admin)
		return ctrl.Result{}, nil
	}
	s.adminPassword = password
	// A copy for removing registrations from Keystone, whatever is deleted first.
	saved, err := r.cleanupData(ctx, s.api, password)
	if err != nil {
		return ctrl.Result{}, err
	}
	cleanup, err := r.writeSecret(ctx, s.api, deploy.CleanupSecretName(s.api), saved, Finalizer)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A no-op but on a Secret whose finalizer was removed.
	if err := finalizers.Add(ctx, r.Client, cleanup, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	s.round.MarkTrue(keystonev1.KeystoneAPIInputReady, "admin password found in secret %s", spec.Secret)
	return ctrl.Result{}, nil
}

// cleanupData is what the cleanup Secret keeps: the admin's password and the CA
// bundle of tls.caBundleSecretName. A bundle that cannot be read now keeps its earlier
// copy (TLSInputReady reports the bundle's absence).
func (r *Reconciler) cleanupData(ctx context.Context, api *keystonev1.KeystoneAPI, password string) (map[string]string, error) {
	data := map[string]string{deploy.CleanupPasswordKey: password}
	if api.Spec.TLS.CaBundleSecretName == "" {
		return data, nil
	}
	if ca, err := access.CABundle(ctx, r.Client, api); err == nil {
		data[deploy.CleanupCABundleKey] = string(ca)
		return data, nil
	}
	previous := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.CleanupSecretName(api)}, previous)
	if client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("reading secret %s: %w", deploy.CleanupSecretName(api), err)
	}
	if ca, ok := previous.Data[deploy.CleanupCABundleKey]; ok {
		data[deploy.CleanupCABundleKey] = string(ca)
	}
	return data, nil
}

// secretValue reads one key of a Secret; found is false when the Secret or key is missing.
func (r *Reconciler) secretValue(ctx context.Context, ns, name, key string) (value string, found bool, err error) {
	secret := &corev1.Secret{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("reading secret %s: %w", name, err)
	}
	v, ok := secret.Data[key]
	return string(v), ok, nil
}

// reconcileDatabase marks DBReady: it owns a MariaDBAccount (with a generated password
// unless the account exists) and a MariaDBDatabase, mirrors their Ready, and finds the
// database instance's Service for status.databaseHostname.
func (r *Reconciler) reconcileDatabase(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIDBReady
	account, db, err := r.databaseObjects(ctx, api, s.acting(step))
	if err != nil || account == nil || db == nil {
		return ctrl.Result{}, err
	}
	if s.round.Mirror(step, "MariaDBDatabase", db.Name, db.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if s.round.Mirror(step, "MariaDBAccount", account.Name, account.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	password, found, err := r.secretValue(ctx, api.Namespace, account.Spec.Secret, mariadbv1.DatabasePasswordSelector)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !found {
		s.round.MarkFalse(step, condition.DependencyNotFound, "secret %s of MariaDBAccount %s with key %s not found",
			account.Spec.Secret, account.Name, mariadbv1.DatabasePasswordSelector)
		return ctrl.Result{}, nil
	}
	host, err := r.databaseHostname(ctx, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	if host == "" {
		s.round.MarkFalse(step, condition.Requested, "waiting for the Service of database instance %s", api.Spec.DatabaseInstance)
		return ctrl.Result{}, nil
	}
	s.dbUser, s.dbPassword, s.databaseTLS = account.Spec.UserName, password, db.Status.TLSSupport
	api.Status.DatabaseHostname = host
	s.round.MarkTrue(step, "database %s ready at %s", deploy.DatabaseName, host)
	return ctrl.Result{}, nil
}

// databaseObjects returns the MariaDBAccount and MariaDBDatabase, creating or updating
// them when ensure is set; otherwise either is nil when it does not exist.
func (r *Reconciler) databaseObjects(ctx context.Context, api *keystonev1.KeystoneAPI, ensure bool) (
	*mariadbv1.MariaDBAccount, *mariadbv1.MariaDBDatabase, error) {
	db := &mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Name: deploy.DatabaseName, Namespace: api.Namespace}}
	if !ensure {
		account := &mariadbv1.MariaDBAccount{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: api.Spec.DatabaseAccount}, account); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
		if err := r.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
		return account, db, nil
	}
	account, err := r.ensureDatabaseAccount(ctx, api)
	if err != nil {
		return nil, nil, err
	}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, db, func() error {
		db.Spec.Name = deploy.DatabaseName
		db.Labels = mergeLabels(db.Labels, map[string]string{"dbName": api.Spec.DatabaseInstance})
		controllerutil.AddFinalizer(db, finalizerFor(api))
		return controllerutil.SetControllerReference(api, db, r.Scheme())
	}); err != nil {
		return nil, nil, fmt.Errorf("ensuring MariaDBDatabase %s: %w", db.Name, err)
	}
	return account, db, nil
}

// ensureDatabaseAccount returns the MariaDBAccount, creating it and its password
// Secret when missing; an existing account keeps its spec.
func (r *Reconciler) ensureDatabaseAccount(ctx context.Context, api *keystonev1.KeystoneAPI) (*mariadbv1.MariaDBAccount, error) {
	account := &mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Name: api.Spec.DatabaseAccount, Namespace: api.Namespace}}
	err := r.Get(ctx, client.ObjectKeyFromObject(account), account)
	if apierrors.IsNotFound(err) {
		if err := r.ensureDBPasswordSecret(ctx, api); err != nil {
			return nil, err
		}
		account.Spec = mariadbv1.MariaDBAccountSpec{UserName: api.Spec.DatabaseAccount, Secret: deploy.DBSecretName(api),
			AccountType: mariadbv1.User}
	} else if err != nil {
		return nil, fmt.Errorf("reading MariaDBAccount %s: %w", account.Name, err)
	}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, account, func() error {
		account.Labels = mergeLabels(account.Labels, map[string]string{"mariaDBDatabaseName": deploy.DatabaseName})
		controllerutil.AddFinalizer(account, finalizerFor(api))
		if metav1.GetControllerOf(account) == nil && account.CreationTimestamp.IsZero() {
			return controllerutil.SetControllerReference(api, account, r.Scheme())
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("ensuring MariaDBAccount %s: %w", account.Name, err)
	}
	return account, nil
}

// ensureDBPasswordSecret creates the database password Secret once; it never changes it.
func (r *Reconciler) ensureDBPasswordSecret(ctx context.Context, api *keystonev1.KeystoneAPI) error {
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: deploy.DBSecretName(api)}, secret)
	if !apierrors.IsNotFound(err) {
		return err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("generating the database password: %w", err)
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: deploy.DBSecretName(api), Namespace: api.Namespace, Labels: deploy.Labels(api)},
		Data:       map[string][]byte{mariadbv1.DatabasePasswordSelector: []byte(hex.EncodeToString(b))},
	}
	if err := controllerutil.SetControllerReference(api, secret, r.Scheme()); err != nil {
		return fmt.Errorf("owning secret %s: %w", secret.Name, err)
	}
	if err := r.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating secret %s: %w", secret.Name, err)
	}
	return nil
}

// databaseHostname finds the Service the database instance publishes (labels
// app=mariadb, cr=mariadb-<instance>, as mariadb-operator sets them); "" when none yet.
func (r *Reconciler) databaseHostname(ctx context.Context, api *keystonev1.KeystoneAPI) (string, error) {
	services := &corev1.ServiceList{}
	if err := r.List(ctx, services, client.InNamespace(api.Namespace), client.MatchingLabels(galeraServiceLabels(api.Spec.DatabaseInstance))); err != nil {
		return "", fmt.Errorf("listing the services of database instance %s: %w", api.Spec.DatabaseInstance, err)
	}
	if len(services.Items) == 0 {
		return "", nil
	}
	svc := services.Items[0]
	return svc.Name + "." + svc.Namespace + ".svc", nil
}

func galeraServiceLabels(instance string) map[string]string {
	return map[string]string{"app": "mariadb", "cr": "mariadb-" + instance}
}

// reconcileMemcached marks MemcachedReady: it mirrors the Memcached and takes its servers.
func (r *Reconciler) reconcileMemcached(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIMemcachedReady
	mc := &memcachedv1.Memcached{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: api.Spec.MemcachedInstance}, mc)
	if apierrors.IsNotFound(err) {
		s.round.MarkFalse(step, condition.DependencyNotFound, "Memcached %s not found", api.Spec.MemcachedInstance)
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Memcached %s: %w", api.Spec.MemcachedInstance, err)
	}
	if s.acting(step) {
		if err := finalizers.Add(ctx, r.Client, mc, finalizerFor(api)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s.round.Mirror(step, "Memcached", mc.Name, mc.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if len(mc.Status.ServerList) == 0 {
		s.round.MarkFalse(step, condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
		return ctrl.Result{}, nil
	}
	s.memcachedServers = mc.Status.ServerList
	s.memcachedTLS, s.memcachedMTLSSecret = mc.GetMemcachedTLSSupport(), ""
	if s.memcachedTLS {
		s.memcachedMTLSSecret = memcachedMTLSSecret(mc)
	}
	s.round.MarkTrue(step, "Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
	return ctrl.Result{}, nil
}

// memcachedMTLSSecret is the Secret of the client certificate mc asks for, "" when
// it asks for none (infra-operator's GetMemcachedMTLSSecret, which expects the name set).
func memcachedMTLSSecret(mc *memcachedv1.Memcached) string {
	if mc.Spec.TLS.MTLS.AuthCertSecret.SecretName == nil {
		return ""
	}
	return mc.GetMemcachedMTLSSecret()
}

func setHash(api *keystonev1.KeystoneAPI, key, value string) {
	if api.Status.Hash == nil {
		api.Status.Hash = map[string]string{}
	}
	api.Status.Hash[key] = value
}

func mergeLabels(existing, add map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range existing {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// finalizerFor is the finalizer a KeystoneAPI puts on the objects it uses; it names
// the KeystoneAPI so that several can share a Memcached.
func finalizerFor(api *keystonev1.KeystoneAPI) string {
	return finalizers.For("keystoneapi", api.Name)
}
