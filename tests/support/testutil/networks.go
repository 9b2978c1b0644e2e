package testutil

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NetworkAttachmentDefinition returns Multus's definition of a macvlan network name in
// ns, as a KeystoneAPI's networkAttachments name it (unstructured: no Go types of it).
func NetworkAttachmentDefinition(ns, name string) *unstructured.Unstructured {
	nad := &unstructured.Unstructured{}
	nad.SetGroupVersionKind(schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"})
	nad.SetNamespace(ns)
	nad.SetName(name)
	nad.Object["spec"] = map[string]any{"config": `{"cniVersion": "0.3.1", "type": "macvlan"}`}
	return nad
}
