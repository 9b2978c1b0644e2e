package keystoneapi

import (
	"testing"

	. "github.com/onsi/gomega"
	lc "github.com/openstack-k8s-operators/lib-common/modules/common/condition"
	mariadbv1 "github.com/openstack-k8s-operators/mariadb-operator/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDatabaseVerdict(t *testing.T) {
	db := func(conds lc.Conditions) *mariadbv1.MariaDBDatabase {
		return &mariadbv1.MariaDBDatabase{ObjectMeta: metav1.ObjectMeta{Name: "keystone"}, Status: mariadbv1.MariaDBDatabaseStatus{Conditions: conds}}
	}
	account := func(conds lc.Conditions) *mariadbv1.MariaDBAccount {
		return &mariadbv1.MariaDBAccount{ObjectMeta: metav1.ObjectMeta{Name: "keystone"},
			Spec: mariadbv1.MariaDBAccountSpec{Secret: "keystone-db-secret"}, Status: mariadbv1.MariaDBAccountStatus{Conditions: conds}}
	}
	tests := []struct {
		name     string
		db       *mariadbv1.MariaDBDatabase
		account  *mariadbv1.MariaDBAccount
		password bool
		host     string
		want     verdictOf
	}{
		{"database coming up, before the account", db(notReadyInfo), account(failing), true, "h", verdictOf{false, "Requested",
			lc.SeverityInfo, "MariaDBDatabase keystone: deploying"}},
		{"account failing", db(isReady), account(failing), true, "h", verdictOf{false, "ErrorReason", lc.SeverityError,
			"MariaDBAccount keystone: broken"}},
		{"password missing", db(isReady), account(isReady), false, "h", verdictOf{false, "DependencyNotFound", lc.SeverityWarning,
			"secret keystone-db-secret of MariaDBAccount keystone with key DatabasePassword not found"}},
		{"no Service yet", db(isReady), account(isReady), true, "", verdictOf{false, "Requested", lc.SeverityInfo,
			"waiting for the Service of database instance openstack"}},
		{"ready", db(isReady), account(isReady), true, "openstack.ns.svc", verdictOf{true, "", "",
			"database keystone ready at openstack.ns.svc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(brief(databaseVerdict(tt.db, tt.account, tt.password, "openstack", tt.host))).To(Equal(tt.want))
		})
	}
}
