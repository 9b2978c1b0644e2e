package keystoneservice

import (
	"context"
	"fmt"
	"slices"
	"sort"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/keymutex"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A service user may be shared by the KeystoneServices of one namespace (heat-operator
// registers "heat" and "heat-cfn", both with serviceUser heat and one password). The
// user carries the mark of one of them, its keeper: the one that created it, or the one
// it was handed over to. The keeper sets its password and has it carry the union of
// the sharers' roles; the others use it (identity.Shared), check that their password is
// the user's, and assign their own roles. The user goes with the last KeystoneService
// that names it: one that goes while others stay hands the mark over to the oldest of
// them (handOver). A user marked by a KeystoneService of another namespace or cluster
// stays refused.

// userIndex indexes KeystoneServices by the users they name: spec.serviceUser, and the
// user UserAnnotation records while a change of serviceUser moves from one to the other.
const userIndex = "keystoneservice.user"

// usersNamed is userIndex's function.
func usersNamed(o client.Object) []string {
	svc := o.(*keystonev1.KeystoneService)
	names := sets.New(svc.Spec.ServiceUser)
	if recorded := svc.Annotations[UserAnnotation]; recorded != "" {
		names.Insert(recorded)
	}
	return sets.List(names)
}

// sharers lists the other KeystoneServices of svc's namespace that name user (from the
// cache), oldest first.
func (r *Reconciler) sharers(ctx context.Context, svc *keystonev1.KeystoneService, user string) ([]keystonev1.KeystoneService, error) {
	var list keystonev1.KeystoneServiceList
	if err := r.List(ctx, &list, client.InNamespace(svc.Namespace), client.MatchingFields{userIndex: user}); err != nil {
		return nil, fmt.Errorf("listing the KeystoneServices of user %s: %w", user, err)
	}
	return oldestFirst(list.Items, func(other *keystonev1.KeystoneService) bool { return other.UID != svc.UID }), nil
}

// staying lists the other KeystoneServices of svc's namespace that name user and are
// not being deleted, oldest first, as the API server has them: a deletion the cache has
// not seen yet must not receive the user (it would be left in Keystone).
func (r *Reconciler) staying(ctx context.Context, svc *keystonev1.KeystoneService, user string) ([]keystonev1.KeystoneService, error) {
	var list keystonev1.KeystoneServiceList
	if err := r.Uncached().List(ctx, &list, client.InNamespace(svc.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the KeystoneServices of user %s: %w", user, err)
	}
	return oldestFirst(list.Items, func(other *keystonev1.KeystoneService) bool {
		return other.UID != svc.UID && other.DeletionTimestamp.IsZero() && slices.Contains(usersNamed(other), user)
	}), nil
}

// oldestFirst returns the items keep takes, oldest first (then by name).
func oldestFirst(items []keystonev1.KeystoneService, keep func(*keystonev1.KeystoneService) bool) []keystonev1.KeystoneService {
	out := make([]keystonev1.KeystoneService, 0, len(items))
	for i := range items {
		if keep(&items[i]) {
			out = append(out, items[i])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if ti, tj := out[i].CreationTimestamp, out[j].CreationTimestamp; !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// sharing says how svc may use a user Keystone says another owner registered (mark):
// shared, when mark names another KeystoneService of svc's namespace that exists, its
// UID proving it is of this cluster (read from the cache, and from the API server when
// the cache lacks it: a KeystoneService created at the same moment); taken over, when
// it names one that is gone and the mark names this cluster (a keeper removed without
// handing the user over). Neither for any other mark: the user stays another's.
func (r *Reconciler) sharing(ctx context.Context, svc *keystonev1.KeystoneService, mark string) (shared, takeOver bool, err error) {
	m, parsed := identity.ParseMark(mark)
	if !parsed || m.Kind != Kind || m.Namespace != svc.Namespace || m.Name == svc.Name {
		return false, false, nil
	}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
	var keeper keystonev1.KeystoneService
	for _, reader := range []client.Reader{r.Client, r.Uncached()} {
		err = reader.Get(ctx, key, &keeper)
		switch {
		case err == nil && string(keeper.UID) == m.UID:
			return true, false, nil
		case err != nil && !apierrors.IsNotFound(err):
			return false, false, fmt.Errorf("reading KeystoneService %s, which registered a user: %w", m.Name, err)
		}
	}
	gone := m.Cluster != "" && m.Cluster == r.ClusterID
	return false, gone, nil
}

// rolesOf is the union of the roles of svc and of those sharing its user, sorted.
func rolesOf(svc *keystonev1.KeystoneService, sharers []keystonev1.KeystoneService) []string {
	roles := sets.New(svc.Spec.ServiceRoles()...)
	for _, other := range sharers {
		if other.Spec.ServiceUser == svc.Spec.ServiceUser {
			roles.Insert(other.Spec.ServiceRoles()...)
		}
	}
	return sets.List(roles)
}

// handOver keeps the user named user, which svc is about to give up (deleted, or
// moved to another serviceUser), for the other KeystoneServices that still name it: the
// oldest of them becomes its keeper, if svc was (kc.HandOverUser). It tells whether
// another KeystoneService still names the user: then svc must not delete it.
//
// Hand-overs of one user take turns (userTurns), each reading who stays from the API
// server: a keeper never hands the user to a KeystoneService whose own deletion has
// already passed here, found the user not its own and gone without it. One that reads
// after a hand-over finds the user marked as its own, and deletes it. While api, the
// namespace's KeystoneAPI, is being deleted, nobody stays: every registration of the
// namespace leaves its Keystone, and the keeper deletes the user.
func (r *Reconciler) handOver(ctx context.Context, kc *identity.Client, api *keystonev1.KeystoneAPI, svc *keystonev1.KeystoneService,
	user string, claimUnmarked bool) (bool, error) {
	if api != nil && !api.DeletionTimestamp.IsZero() {
		return false, nil
	}
	turn := svc.Namespace + "/" + user
	userTurns.LockKey(turn)
	defer func() { _ = userTurns.UnlockKey(turn) }()
	stay, err := r.staying(ctx, svc, user)
	if err != nil || len(stay) == 0 {
		return false, err
	}
	next := identity.OwnerMark(Kind, &stay[0], r.ClusterID)
	if _, err := kc.HandOverUser(ctx, defaultDomainID, user, r.owner(svc), claimUnmarked, next); err != nil {
		return true, fmt.Errorf("handing user %s over to KeystoneService %s: %w", user, stay[0].Name, err)
	}
	return true, nil
}

// userTurns serializes the hand-overs of one user (namespace/name), across the
// reconciles of every manager of this process: a hashed set of locks, so two users may
// share one.
var userTurns = keymutex.NewHashed(0)

// wakeSharers wakes the other KeystoneServices naming the users of one that was
// created, deleted or changed: the keeper revokes the roles no sharer asks for any
// more, and a sharer left alone becomes the keeper.
func (r *Reconciler) wakeSharers() handler.TypedEventHandler[client.Object, reconcile.Request] {
	wake := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		svc, ok := o.(*keystonev1.KeystoneService)
		if !ok {
			return
		}
		woken := sets.New[types.NamespacedName]()
		for _, user := range usersNamed(svc) {
			others, err := r.sharers(ctx, svc, user)
			if err != nil {
				return
			}
			for _, other := range others {
				woken.Insert(types.NamespacedName{Namespace: other.Namespace, Name: other.Name})
			}
		}
		for key := range woken {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			wake(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() {
				wake(ctx, e.ObjectOld, q)
				wake(ctx, e.ObjectNew, q)
			}
		},
	}
}
