package realkeystone

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/keystone-stepwise/keystone-operator/internal/deploy"
	"github.com/keystone-stepwise/keystone-operator/tests/support/controlplane"
	"github.com/keystone-stepwise/keystone-operator/tests/support/localkeystone"
	. "github.com/onsi/gomega"
)

// TestDBSyncGivesUpOnUnreachableDatabase runs the db-sync Job's command with Debian's
// keystone-manage against a port nothing listens on. With the job's configuration
// (keystone-manage.conf after keystone.conf) the attempt fails with the cause in its
// output; with Keystone's configuration alone it would retry forever. Here the
// retries are 1 s apart (a test file read last); their number is the shipped one.
func TestDBSyncGivesUpOnUnreachableDatabase(t *testing.T) {
	controlplane.Unavailable(t, localkeystone.NotInstalled())
	g := NewWithT(t)
	dir := t.TempDir()
	port, err := localkeystone.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	api := testKeystoneAPI()
	files, err := deploy.RenderConfig(api, deploy.ConfigInput{
		DatabaseHostname: fmt.Sprintf("127.0.0.1:%d", port), DatabaseUser: "keystone", DatabasePassword: "unused",
		MyCnfPath: filepath.Join(dir, deploy.MyCnf),
	})
	g.Expect(err).NotTo(HaveOccurred())
	files["fast-retries.conf"] = "[database]\nretry_interval = 1\n"
	paths, err := localkeystone.WriteFiles(dir, []string{deploy.KeystoneConf, deploy.CustomConf, deploy.ManageConf,
		deploy.MyCnf, "fast-retries.conf"}, files)
	g.Expect(err).NotTo(HaveOccurred())
	sync := localkeystone.JobShell(deploy.Gathered{API: api, DBSyncHash: "h"}.DBSyncJob().Spec.Template.Spec.Containers[0].Command[2])

	bounded := &localkeystone.Keystone{ConfigFiles: paths[:2], ManageFiles: []string{paths[2], paths[4]}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err = bounded.ManageShell(ctx, nil, sync)
	elapsed := time.Since(start)
	g.Expect(err).To(HaveOccurred(), "db_sync cannot succeed without a database")
	g.Expect(ctx.Err()).NotTo(HaveOccurred(), "db_sync gave up by itself, after %s", elapsed)
	g.Expect(err.Error()).To(ContainSubstring("Can't connect to"), "the cause is in the output the operator reports")
	t.Logf("db_sync gave up after %s (%d retries 1 s apart)", elapsed.Round(time.Second), deploy.JobDBRetries)

	unbounded := &localkeystone.Keystone{ConfigFiles: paths[:2], ManageFiles: []string{paths[4]}}
	wait := time.Duration(deploy.JobDBRetries+5) * time.Second
	ctx2, cancel2 := context.WithTimeout(context.Background(), wait)
	defer cancel2()
	g.Expect(unbounded.ManageShell(ctx2, nil, sync)).To(HaveOccurred())
	g.Expect(ctx2.Err()).To(HaveOccurred(), "without keystone-manage.conf db_sync still retries after %s", wait)
}
