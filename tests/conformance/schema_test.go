package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// notYetImplemented are the property paths of keystone-operator's CRDs this suite does
// not serve yet: none today. A path listed here must be missing, and a path missing
// must be listed, so the list only shrinks.
var notYetImplemented []string

// TestSchemaIsASuperset walks every property path of keystone-operator's four CRDs (of
// the API module this suite pins) and finds it in ours with a compatible type: an object
// that keystone-operator stores, ours stores without pruning a field.
func TestSchemaIsASuperset(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", upstreamAPI).Output()
	if err != nil {
		t.Fatalf("locating %s: %v", upstreamAPI, err)
	}
	upstreamFiles, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "bases", "keystone.openstack.org_*.yaml"))
	if err != nil || len(upstreamFiles) != 4 {
		t.Fatalf("keystone-operator's four CRDs: found %v (%v)", upstreamFiles, err)
	}
	var missing []string
	for _, f := range upstreamFiles {
		up := readCRDSchema(t, f)
		ours := readCRDSchema(t, filepath.Join("..", "..", "config", "crd", "bases", filepath.Base(f)))
		plural := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "keystone.openstack.org_"), ".yaml")
		missing = append(missing, schemaGaps(plural, up, ours)...)
	}
	sort.Strings(missing)
	for _, gap := range missing {
		if !slices.Contains(notYetImplemented, strings.SplitN(gap, ":", 2)[0]) {
			t.Errorf("keystone-operator's %s", gap)
		}
	}
	for _, listed := range notYetImplemented {
		if !slices.ContainsFunc(missing, func(gap string) bool { return strings.HasPrefix(gap, listed+":") }) {
			t.Errorf("%s is served now: remove it from notYetImplemented", listed)
		}
	}
}

func readCRDSchema(t *testing.T, path string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1beta1" {
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("%s has no v1beta1", path)
	return nil
}

// schemaGaps returns "path: what is wrong" for each property of up that ours lacks or
// types differently. Where up is a map and ours an object with named properties (our
// override.service has public and internal, keystone-operator's any key), each named
// property must hold what the map's values hold.
func schemaGaps(path string, up, ours *apiextensionsv1.JSONSchemaProps) []string {
	if ours == nil {
		return []string{path + ": missing"}
	}
	upMap, oursMap := up.AdditionalProperties != nil && up.AdditionalProperties.Schema != nil,
		ours.AdditionalProperties != nil && ours.AdditionalProperties.Schema != nil
	if upMap && !oursMap && len(ours.Properties) > 0 {
		var gaps []string
		for _, name := range sortedKeys(ours.Properties) {
			p := ours.Properties[name]
			gaps = append(gaps, schemaGaps(path+"."+name, up.AdditionalProperties.Schema, &p)...)
		}
		return gaps
	}
	if up.Type != ours.Type || up.XIntOrString != ours.XIntOrString || upMap != oursMap {
		return []string{fmt.Sprintf("%s: type %s, ours %s", path, describe(up), describe(ours))}
	}
	return childGaps(path, up, ours)
}

// childGaps compares the properties, items and map values of two schemas of one type.
func childGaps(path string, up, ours *apiextensionsv1.JSONSchemaProps) []string {
	var gaps []string
	for _, name := range sortedKeys(up.Properties) {
		u := up.Properties[name]
		var o *apiextensionsv1.JSONSchemaProps
		if p, ok := ours.Properties[name]; ok {
			o = &p
		}
		if o == nil && ours.XPreserveUnknownFields != nil && *ours.XPreserveUnknownFields {
			continue
		}
		gaps = append(gaps, schemaGaps(path+"."+name, &u, o)...)
	}
	if up.Items != nil && up.Items.Schema != nil {
		var o *apiextensionsv1.JSONSchemaProps
		if ours.Items != nil {
			o = ours.Items.Schema
		}
		gaps = append(gaps, schemaGaps(path+"[]", up.Items.Schema, o)...)
	}
	if up.AdditionalProperties != nil && up.AdditionalProperties.Schema != nil {
		gaps = append(gaps, schemaGaps(path+"{}", up.AdditionalProperties.Schema, ours.AdditionalProperties.Schema)...)
	}
	return gaps
}

func describe(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map of " + describe(s.AdditionalProperties.Schema)
	case s.Type == "":
		return "any"
	}
	return s.Type
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
