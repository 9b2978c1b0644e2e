package keystoneapplicationcredential

import (
	"context"
	"fmt"

	keystonev1 "github.com/keystone-stepwise/keystone-operator/apis/keystone/v1beta1"
	"github.com/keystone-stepwise/keystone-operator/internal/identity"
)

// revocable tells whether the credential id, read from a Secret of this object, may be
// revoked with the admin's credentials, and when not, why. A Secret proves nothing:
// anyone who may write Secrets in the namespace can make one with this object's labels,
// its owner reference and any AC_ID, and Keystone lets the admin revoke any user's
// credential (a person's, another namespace's, another cluster's). So the credential
// must be this object's by what a tenant cannot write: the ID its status records
// (current, or the previous one this operator replaced), this object's mark on the
// credential in Keystone (this operator made it for this object), or, in a round that
// authenticated as the object's user (userID, "" for none), Keystone saying the
// credential is that user's: the namespace holds that user's password, and could revoke
// it itself. A credential Keystone no longer has is gone: nothing to revoke.
func (r *Reconciler) revocable(ctx context.Context, ac *keystonev1.KeystoneApplicationCredential, admin *identity.Client,
	userID, id string) (bool, string, error) {
	if id == "" || id == ac.Status.ACID || id == ac.Status.PreviousACID {
		return true, "", nil
	}
	info, err := admin.GetAppCred(ctx, id)
	switch {
	case err != nil:
		return false, "", err
	case info == nil, info.MarkedBy(r.owner(ac)), userID != "" && info.UserID == userID:
		return true, "", nil
	}
	return false, fmt.Sprintf("credential %s is user %s's, and neither this object's status records it nor does it carry this "+
		"object's mark", id, info.UserID), nil
}
