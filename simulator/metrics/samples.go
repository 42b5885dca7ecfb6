package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples are the samples of one scrape, by series: the metric's name
// followed, when it has labels, by its labels in name order, as the text
// format writes them, e.g.
//
//	partnersim_requests_total{operation="campaign/list",status="200"}
//	partnersim_request_duration_seconds_bucket{le="0.005",operation="contact/add"}
//	partnersim_contacts_stored
//
// A histogram gives its _bucket, _sum and _count series.
type Samples map[string]float64

// ReadSamples parses a scrape in Prometheus's text format (what GET
// /metrics answers by default), for a test or a tool that reads the
// simulator's metrics. It fails on anything that is not that format.
func ReadSamples(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("read samples: %w", err)
	}
	out := Samples{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := labelPairs(m.GetLabel())
			switch {
			case m.Histogram != nil:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					out[series(name+"_bucket", labels, "le", formatFloat(b.GetUpperBound()))] = float64(b.GetCumulativeCount())
				}
				out[series(name+"_bucket", labels, "le", "+Inf")] = float64(h.GetSampleCount())
				out[series(name+"_sum", labels, "", "")] = h.GetSampleSum()
				out[series(name+"_count", labels, "", "")] = float64(h.GetSampleCount())
			case m.Summary != nil:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					out[series(name, labels, "quantile", formatFloat(q.GetQuantile()))] = q.GetValue()
				}
				out[series(name+"_sum", labels, "", "")] = s.GetSampleSum()
				out[series(name+"_count", labels, "", "")] = float64(s.GetSampleCount())
			case m.Counter != nil:
				out[series(name, labels, "", "")] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[series(name, labels, "", "")] = m.GetGauge().GetValue()
			default:
				out[series(name, labels, "", "")] = m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

// Sum adds the values of every series of the metric name whose labels
// include those given as name, value pairs: Sum("partnersim_requests_total",
// "status", "429") is every operation's 429s.
func (s Samples) Sum(name string, labels ...string) float64 {
	var sum float64
	for k, v := range s {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			pair := labels[i] + "=" + strconv.Quote(labels[i+1])
			match = match && (strings.Contains(k, "{"+pair) || strings.Contains(k, ","+pair))
		}
		if match {
			sum += v
		}
	}
	return sum
}

func labelPairs(pairs []*dto.LabelPair) [][2]string {
	out := make([][2]string, 0, len(pairs)+1)
	for _, p := range pairs {
		out = append(out, [2]string{p.GetName(), p.GetValue()})
	}
	return out
}

// series writes a series' key, with one more label when extra is set.
func series(name string, labels [][2]string, extra, value string) string {
	if extra != "" {
		labels = append(slices.Clone(labels), [2]string{extra, value})
	}
	if len(labels) == 0 {
		return name
	}
	slices.SortFunc(labels, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[0] + "=" + strconv.Quote(l[1]))
	}
	b.WriteByte('}')
	return b.String()
}

func formatFloat(f float64) string {
	if math.IsInf(f, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
