// Package k8s holds the Kubernetes manifests of the controller replicas
// (kubectl apply -k deploy/k8s) and the test that checks them.
package k8s
