package keystoneapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/finalizers"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	"github.com/keystone-stepwise/keystone-operator/pkg/keystone"
	memcachedv1 "github.com/openstack-k8s-operators/infra-operator/apis/memcached/v1beta1"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// phases lists the steps of a KeystoneAPI in declared order; RunPhases passes over
// the ones skipped for the spec.
func (r *Reconciler) phases() []condition.Phase[*scope] {
	return []condition.Phase[*scope]{
		{Step: keystonev1.KeystoneAPIInputReady, Run: r.reconcileInput},
		{Step: keystonev1.KeystoneAPIDBReady, Run: r.reconcileDatabase},
		{Step: keystonev1.KeystoneAPIMemcachedReady, Run: r.reconcileMemcached},
		{Step: keystonev1.KeystoneAPIServiceConfigReady, Run: r.reconcileConfig},
		{Step: keystonev1.KeystoneAPIFernetKeysReady, Run: r.reconcileFernetKeys},
		{Step: keystonev1.KeystoneAPIDBSyncReady, Run: r.reconcileDBSync},
		{Step: keystonev1.KeystoneAPIExposeServiceReady, Run: r.reconcileServices},
		{Step: keystonev1.KeystoneAPIBootstrapReady, Run: r.reconcileBootstrap},
		{Step: keystonev1.KeystoneAPIDeploymentReady, Run: r.reconcileDeployment},
		{Step: keystonev1.KeystoneAPIEndpointReady, Run: r.reconcileExternalEndpoint},
		{Step: keystonev1.KeystoneAPIOpenStackConfigReady, Run: r.reconcileOpenStackConfig},
	}
}

// reconcileInput marks InputReady: the admin password Secret and key exist.
func (r *Reconciler) reconcileInput(ctx context.Context, s *scope) (ctrl.Result, error) {
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
	s.round.MarkTrue(keystonev1.KeystoneAPIInputReady, "admin password found in secret %s", spec.Secret)
	return ctrl.Result{}, nil
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
	account, err := r.ensureDatabaseAccount(ctx, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	db := &mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Name: keystone.DatabaseName, Namespace: api.Namespace}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, db, func() error {
		db.Spec.Name = keystone.DatabaseName
		db.Labels = mergeLabels(db.Labels, map[string]string{"dbName": api.Spec.DatabaseInstance})
		controllerutil.AddFinalizer(db, finalizerFor(api))
		return controllerutil.SetControllerReference(api, db, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensuring MariaDBDatabase %s: %w", db.Name, err)
	}
	step := keystonev1.KeystoneAPIDBReady
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
	s.dbUser, s.dbPassword = account.Spec.UserName, password
	api.Status.DatabaseHostname = host
	s.round.MarkTrue(step, "database %s ready at %s", keystone.DatabaseName, host)
	return ctrl.Result{}, nil
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
		account.Spec = mariadbv1.MariaDBAccountSpec{UserName: api.Spec.DatabaseAccount, Secret: keystone.DBSecretName(api),
			AccountType: mariadbv1.User}
	} else if err != nil {
		return nil, fmt.Errorf("reading MariaDBAccount %s: %w", account.Name, err)
	}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, account, func() error {
		account.Labels = mergeLabels(account.Labels, map[string]string{"mariaDBDatabaseName": keystone.DatabaseName})
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
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: keystone.DBSecretName(api)}, secret)
	if !apierrors.IsNotFound(err) {
		return err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("generating the database password: %w", err)
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: keystone.DBSecretName(api), Namespace: api.Namespace, Labels: keystone.Labels(api)},
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
	if err := finalizers.Add(ctx, r.Client, mc, finalizerFor(api)); err != nil {
		return ctrl.Result{}, err
	}
	if s.round.Mirror(step, "Memcached", mc.Name, mc.Status.Conditions); !s.round.IsTrue(step) {
		return ctrl.Result{}, nil
	}
	if len(mc.Status.ServerList) == 0 {
		s.round.MarkFalse(step, condition.Requested, "Memcached %s is ready but lists no servers yet", mc.Name)
		return ctrl.Result{}, nil
	}
	s.memcachedServers = mc.Status.ServerList
	s.round.MarkTrue(step, "Memcached %s ready with %d servers", mc.Name, len(mc.Status.ServerList))
	return ctrl.Result{}, nil
}

// reconcileConfig marks ServiceConfigReady: the rendered configuration is stored in
// its Secret and its hash in status.hash.
func (r *Reconciler) reconcileConfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	files, err := keystone.RenderConfig(api, keystone.ConfigInput{
		DatabaseHostname: api.Status.DatabaseHostname, DatabaseUser: s.dbUser, DatabasePassword: s.dbPassword,
		MemcachedServers: s.memcachedServers,
	})
	if err != nil {
		s.round.MarkFalse(keystonev1.KeystoneAPIServiceConfigReady, condition.CreationFailed, "rendering the configuration: %v", err)
		return ctrl.Result{}, nil
	}
	secret, err := r.writeSecret(ctx, api, keystone.ConfigSecretName(api), files)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The revision is a digest of the Secret's identity and resourceVersion, which
	// change with its contents: the files hold passwords, so no digest of them is published.
	s.configRevision = keystone.Hash(map[string]string{"uid": string(secret.UID), "resourceVersion": secret.ResourceVersion})
	setHash(api, keystone.HashConfig, s.configRevision)
	s.round.MarkTrue(keystonev1.KeystoneAPIServiceConfigReady, "configuration rendered into secret %s", secret.Name)
	return ctrl.Result{}, nil
}

// reconcileFernetKeys marks FernetKeysReady: the keys Secret exists, holds
// fernetMaxActiveKeys fernet keys, and rotates every fernetRotationDays.
func (r *Reconciler) reconcileFernetKeys(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIFernetKeysReady
	maxActive := int(ptr.Deref(api.Spec.FernetMaxActiveKeys, 5))
	now := r.Clock.Now()
	secret := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: api.Namespace, Name: keystone.KeysSecretName(api)}, secret)
	if apierrors.IsNotFound(err) {
		if err := r.createKeysSecret(ctx, api, maxActive, now); err != nil {
			return ctrl.Result{}, err
		}
		s.round.MarkFalse(step, fernetCreated, "fernet and credential keys created in secret %s", keystone.KeysSecretName(api))
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading keys secret: %w", err)
	}
	raw := secret.Annotations[keystone.RotatedAtAnnotation]
	rotatedAt, err := time.Parse(time.RFC3339, raw)
	malformed := raw != "" && err != nil
	switch {
	case malformed:
		// Unreadable: taken as overdue, so rotation never silently stops; the rotation
		// writes a valid time back and the schedule goes on from it.
		rotatedAt = time.Time{}
	case err != nil:
		rotatedAt = now
	}
	keys := keystone.FernetKeys(secret.Data)
	due := keystone.RotationDue(rotatedAt, ptr.Deref(api.Spec.FernetRotationDays, 1))
	rotate := !now.Before(due)
	if rotate || len(keys) != maxActive || secret.Annotations[keystone.RotatedAtAnnotation] == "" {
		if rotate {
			keys, err = keystone.Rotate(keys, maxActive)
			rotatedAt = now
		} else {
			keys, err = keystone.Resize(keys, maxActive)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		patch := client.MergeFrom(secret.DeepCopy())
		secret.Data = keystone.WithFernetKeys(secret.Data, keys)
		metav1.SetMetaDataAnnotation(&secret.ObjectMeta, keystone.RotatedAtAnnotation, rotatedAt.UTC().Format(time.RFC3339))
		if err := r.Patch(ctx, secret, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("rotating fernet keys: %w", err)
		}
		due = keystone.RotationDue(rotatedAt, ptr.Deref(api.Spec.FernetRotationDays, 1))
	}
	s.requeueAt(due.Sub(now))
	if malformed {
		s.round.MarkFalse(step, invalidAnnotation, "annotation %s=%q of secret %s is not an RFC 3339 time (such as %s): "+
			"the keys were rotated now, and the next rotation is at %s", keystone.RotatedAtAnnotation, raw, secret.Name,
			now.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339))
		return ctrl.Result{}, nil
	}
	s.round.MarkTrue(step, "%d fernet keys in secret %s, next rotation at %s", len(keys), secret.Name,
		due.UTC().Format(time.RFC3339))
	return ctrl.Result{}, nil
}

func (r *Reconciler) createKeysSecret(ctx context.Context, api *keystonev1.KeystoneAPI, maxActive int, now time.Time) error {
	data, err := keystone.NewKeysData(maxActive)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: keystone.KeysSecretName(api), Namespace: api.Namespace, Labels: keystone.Labels(api),
			Annotations: map[string]string{keystone.RotatedAtAnnotation: now.UTC().Format(time.RFC3339)}},
		Data: data,
	}
	if err := controllerutil.SetControllerReference(api, secret, r.Scheme()); err != nil {
		return fmt.Errorf("owning keys secret: %w", err)
	}
	if err := r.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating keys secret: %w", err)
	}
	return nil
}

// reconcileDBSync marks DBSyncReady: db_sync ran for the current configuration and image.
func (r *Reconciler) reconcileDBSync(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.dbSyncHash = keystone.Hash(map[string]string{"config": s.configRevision, "image": s.api.Spec.ContainerImage})
	return ctrl.Result{}, r.runJob(ctx, s, keystonev1.KeystoneAPIDBSyncReady, jobInputs{HashKey: keystone.HashDBSync, Public: s.dbSyncHash},
		keystone.DBSyncJob(s.api, s.dbSyncHash))
}

// reconcileServices marks ExposeServiceReady: the public and internal Services exist
// and status.apiEndpoints lists Keystone's URLs.
func (r *Reconciler) reconcileServices(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	for _, desired := range keystone.Services(api) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: desired.Name, Namespace: desired.Namespace}}
		if _, err := controllerutil.CreateOrPatch(ctx, r.Client, svc, func() error {
			svc.Labels = mergeLabels(svc.Labels, desired.Labels)
			svc.Annotations = mergeLabels(svc.Annotations, desired.Annotations)
			if !equality.Semantic.DeepDerivative(desired.Spec.Ports, svc.Spec.Ports) {
				svc.Spec.Ports = desired.Spec.Ports
			}
			svc.Spec.Selector = desired.Spec.Selector
			return controllerutil.SetControllerReference(api, svc, r.Scheme())
		}); err != nil {
			return ctrl.Result{}, fmt.Errorf("ensuring service %s: %w", svc.Name, err)
		}
	}
	api.Status.APIEndpoints = keystone.Endpoints(api)
	api.Status.Region = api.Spec.Region
	s.round.MarkTrue(keystonev1.KeystoneAPIExposeServiceReady, "services %s and %s expose port %d",
		keystone.ServiceName(api, keystonev1.EndpointPublic), keystone.ServiceName(api, keystonev1.EndpointInternal), keystone.Port)
	return ctrl.Result{}, nil
}

// reconcileBootstrap marks BootstrapReady: bootstrap ran for the current database,
// admin identity, region and endpoints (published as a digest), and for the current
// admin password (remembered only in the private state Secret).
func (r *Reconciler) reconcileBootstrap(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	inputs := map[string]string{
		"dbsync": s.dbSyncHash, "user": api.Spec.AdminUser, "project": api.Spec.AdminProject, "region": api.Spec.Region,
	}
	for iface, url := range api.Status.APIEndpoints {
		inputs["endpoint-"+iface] = url
	}
	if err := r.loadPrivateState(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	in := jobInputs{HashKey: keystone.HashBootstrap, Public: keystone.Hash(inputs),
		Secret: keystone.PrivateMAC(s.private.Data, map[string]string{"adminPassword": s.adminPassword})}
	return ctrl.Result{}, r.runJob(ctx, s, keystonev1.KeystoneAPIBootstrapReady, in,
		keystone.BootstrapJob(api, in.Public, api.Status.APIEndpoints))
}

// reconcileDeployment marks DeploymentReady from the Deployment's rollout and records
// status.readyCount.
func (r *Reconciler) reconcileDeployment(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIDeploymentReady
	desired := keystone.Deployment(api, s.configRevision)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: desired.Name, Namespace: desired.Namespace}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, dep, func() error {
		dep.Labels = mergeLabels(dep.Labels, desired.Labels)
		dep.Spec.Replicas = desired.Spec.Replicas
		if dep.Spec.Selector == nil {
			dep.Spec.Selector = desired.Spec.Selector
		}
		if !equality.Semantic.DeepDerivative(desired.Spec.Template, dep.Spec.Template) {
			dep.Spec.Template = desired.Spec.Template
		}
		return controllerutil.SetControllerReference(api, dep, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, fmt.Errorf("ensuring deployment %s: %w", dep.Name, err)
	}
	api.Status.ReadyCount = dep.Status.ReadyReplicas
	want := ptr.Deref(dep.Spec.Replicas, 1)
	switch {
	case dep.Status.ObservedGeneration < dep.Generation:
		s.round.MarkFalse(step, condition.Created, "deployment %s: rollout of the new spec starting", dep.Name)
	case deadlineExceeded(dep) != "":
		s.round.MarkFalse(step, condition.CreationFailed, "deployment %s exceeded its progress deadline: %s", dep.Name, deadlineExceeded(dep))
	case dep.Status.UpdatedReplicas == want && dep.Status.AvailableReplicas == want && dep.Status.Replicas == want:
		s.round.MarkTrue(step, "deployment %s: %d/%d replicas ready", dep.Name, dep.Status.ReadyReplicas, want)
	default:
		s.round.MarkFalse(step, condition.Created, "deployment %s: %d/%d replicas ready, %d updated", dep.Name,
			dep.Status.ReadyReplicas, want, dep.Status.UpdatedReplicas)
	}
	return ctrl.Result{}, nil
}

// deadlineExceeded returns the message of a Progressing=False/ProgressDeadlineExceeded
// condition, or "".
func deadlineExceeded(dep *appsv1.Deployment) string {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return c.Message
		}
	}
	return ""
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

// reconcileOpenStackConfig marks OpenStackConfigReady: the ConfigMap openstack-config
// (clouds.yaml, no password) and the Secret openstack-config-secret (secure.yaml and
// cloudrc with the admin's password) describe the admin's cloud at the public
// endpoint, for openstackclient.
func (r *Reconciler) reconcileOpenStackConfig(ctx context.Context, s *scope) (ctrl.Result, error) {
	api := s.api
	step := keystonev1.KeystoneAPIOpenStackConfigReady
	authURL := api.Status.APIEndpoints[keystonev1.EndpointPublic]
	public, err := keystone.OpenStackConfig(api, authURL)
	if err == nil {
		var private map[string]string
		if private, err = keystone.OpenStackConfigSecret(api, authURL, s.adminPassword); err == nil {
			err = r.writeOpenStackConfig(ctx, api, public, private)
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	s.round.MarkTrue(step, "ConfigMap %s and Secret %s hold the cloud %q of user %s", keystone.OpenStackConfigName,
		keystone.OpenStackConfigSecretName, keystone.CloudName, api.Spec.AdminUser)
	return ctrl.Result{}, nil
}

func (r *Reconciler) writeOpenStackConfig(ctx context.Context, api *keystonev1.KeystoneAPI, public, private map[string]string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: keystone.OpenStackConfigName, Namespace: api.Namespace}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, cm, func() error {
		cm.Labels = mergeLabels(cm.Labels, keystone.Labels(api))
		if !equality.Semantic.DeepEqual(cm.Data, public) {
			cm.Data = public
		}
		return controllerutil.SetControllerReference(api, cm, r.Scheme())
	}); err != nil {
		return fmt.Errorf("writing ConfigMap %s: %w", cm.Name, err)
	}
	_, err := r.writeSecret(ctx, api, keystone.OpenStackConfigSecretName, private)
	return err
}

// writeSecret makes the owned Secret name hold exactly files; it writes only what differs.
func (r *Reconciler) writeSecret(ctx context.Context, api *keystonev1.KeystoneAPI, name string, files map[string]string) (*corev1.Secret, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: api.Namespace}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		secret.Labels = mergeLabels(secret.Labels, keystone.Labels(api))
		data := make(map[string][]byte, len(files))
		for k, v := range files {
			data[k] = []byte(v)
		}
		if !equality.Semantic.DeepEqual(secret.Data, data) {
			secret.Data, secret.StringData = data, nil
		}
		return controllerutil.SetControllerReference(api, secret, r.Scheme())
	}); err != nil {
		return nil, fmt.Errorf("writing Secret %s: %w", name, err)
	}
	return secret, nil
}
