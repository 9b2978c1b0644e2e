package keystoneapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/access"
	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/internal/reconciler"
	"github.com/keystone-stepwise/keystone-operator/pkg/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

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
	secret, found, err := access.SecretKey(ctx, r.Client, api.Namespace, account.Spec.Secret, mariadbv1.DatabasePasswordSelector)
	if err != nil {
		return ctrl.Result{}, err
	}
	host, err := r.databaseHostname(ctx, api)
	if err != nil {
		return ctrl.Result{}, err
	}
	v := databaseVerdict(db, account, found, api.Spec.DatabaseInstance, host)
	if s.round.Apply(step, v); !v.True {
		return ctrl.Result{}, nil
	}
	s.dbUser, s.dbPassword = account.Spec.UserName, string(secret.Data[mariadbv1.DatabasePasswordSelector])
	s.databaseTLS = db.Status.TLSSupport
	api.Status.DatabaseHostname = host
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
	if _, err := reconciler.CreateOrPatch(ctx, r.Client, db, func() error {
		db.Spec.Name = deploy.DatabaseName
		db.Labels = deploy.MergeLabels(db.Labels, map[string]string{"dbName": api.Spec.DatabaseInstance})
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
	if _, err := reconciler.CreateOrPatch(ctx, r.Client, account, func() error {
		account.Labels = deploy.MergeLabels(account.Labels, map[string]string{"mariaDBDatabaseName": deploy.DatabaseName})
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

// databaseVerdict is DBReady from the MariaDBDatabase and MariaDBAccount, whether the
// account's Secret holds its password, and the host of the database instance's Service
// ("" while there is none): both Ready mirrored, the database first; then the
// password (DependencyNotFound); then the Service (Requested).
func databaseVerdict(db *mariadbv1.MariaDBDatabase, account *mariadbv1.MariaDBAccount, passwordFound bool,
	instance, host string) condition.Verdict {
	if v := condition.Mirror("MariaDBDatabase", condition.Of(db.Name, db.Status.Conditions)); !v.True {
		return v
	}
	if v := condition.Mirror("MariaDBAccount", condition.Of(account.Name, account.Status.Conditions)); !v.True {
		return v
	}
	switch {
	case !passwordFound:
		return condition.FalseVerdict(condition.DependencyNotFound, "secret %s of MariaDBAccount %s with key %s not found",
			account.Spec.Secret, account.Name, mariadbv1.DatabasePasswordSelector)
	case host == "":
		return condition.FalseVerdict(condition.Requested, "waiting for the Service of database instance %s", instance)
	}
	return condition.TrueVerdict("database %s ready at %s", deploy.DatabaseName, host)
}
