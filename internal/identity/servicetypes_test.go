package identity

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	. "github.com/onsi/gomega"
)

// debianServiceTypes is the Service Types Authority's data as Debian's
// python3-os-service-types installs it (a dependency of keystone's packages).
const debianServiceTypes = "/usr/lib/python3/dist-packages/os_service_types/data/service-types.json"

// TestServiceTypeAliasesAreTheAuthoritys: the aliases are those of the Service Types
// Authority's data, where Debian's copy is installed (make test installs keystone).
func TestServiceTypeAliasesAreTheAuthoritys(t *testing.T) {
	data, err := os.ReadFile(debianServiceTypes)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip(debianServiceTypes + " is not installed (python3-os-service-types)")
	}
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	var authority struct {
		Reverse map[string]string `json:"reverse"`
	}
	g.Expect(json.Unmarshal(data, &authority)).To(Succeed())
	g.Expect(serviceTypeAliases).To(Equal(authority.Reverse))
}

func TestServiceTypeGroup(t *testing.T) {
	g := NewWithT(t)
	for t, want := range map[string]string{"volumev3": "block-storage", "block-storage": "block-storage", "Block_Storage": "block-storage",
		"load_balancer": "load-balancer", "sharev2": "shared-file-system", "share": "shared-file-system", "image": "image",
		"Ceilometer": "ceilometer"} {
		g.Expect(ServiceTypeGroup(t)).To(Equal(want), t)
	}
}
