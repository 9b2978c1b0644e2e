package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/keystone-stepwise/keystone-operator/internal/tree"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// outputFormats are the formats -o takes.
const outputFormats = "text (the default), wide, json, yaml, or a template: jsonpath=, jsonpath-as-json=, jsonpath-file=, " +
	"go-template= or go-template-file= followed by the template or its file"

// printer is kubectl's printer for -o: json and yaml, or a template (jsonpath,
// go-template). kubectl's name format is not one: the tree's nodes are not objects of
// the API.
func (o *treeOptions) printer() (printers.ResourcePrinter, error) {
	printer, err := o.jsonYaml.ToPrinter(o.output)
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		printer, err = o.template.ToPrinter(o.output)
	}
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, fmt.Errorf("-o %q: %s", o.output, outputFormats)
	}
	return printer, err
}

// print writes nodes with kubectl's printer for -o, as a v1 List of the top nodes
// (items is [] when there are none).
func (o *treeOptions) print(out io.Writer, nodes []*tree.Node) error {
	printer, err := o.printer()
	if err != nil {
		return err
	}
	list, err := listOf(nodes)
	if err != nil {
		return err
	}
	return printer.PrintObj(list, out)
}

// listOf is nodes as a v1 List, the shape kubectl prints for several objects.
func listOf(nodes []*tree.Node) (*unstructured.Unstructured, error) {
	items := []interface{}{}
	if len(nodes) > 0 {
		data, err := json.Marshal(nodes)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, err
		}
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items}}, nil
}
