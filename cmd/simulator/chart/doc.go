// Package chart holds the simulator's Helm chart (Chart.yaml, values.yaml,
// templates/) and its tests: helm lint and helm template with several value
// sets, the rendered manifests parsed and checked (kinds, ports, probes, env,
// secret references). There is no Go code to import here; docs/scale.md says
// how to deploy and size the chart.
package chart
