package tree

import (
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Render draws nodes as text, with ages counted to now.
func Render(out io.Writer, nodes []*Node, now time.Time) error {
	var b strings.Builder
	for _, n := range nodes {
		draw(&b, n, "", "", now)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// draw writes n's line after first, its conditions and children after rest.
func draw(b *strings.Builder, n *Node, first, rest string, now time.Time) {
	b.WriteString(first + objectLine(n) + "\n")
	under := rest + "│  "
	if len(n.Children) == 0 {
		under = rest + "   "
	}
	for _, c := range n.Conditions {
		b.WriteString(under + conditionLine(c, now) + "\n")
	}
	for i, child := range n.Children {
		if i == len(n.Children)-1 {
			draw(b, child, rest+"└─ ", rest+"   ", now)
		} else {
			draw(b, child, rest+"├─ ", rest+"│  ", now)
		}
	}
}

// objectLine is "Kind/name (note)  Ready=Status Severity Reason: message".
func objectLine(n *Node) string {
	line := n.Kind + "/" + n.Name
	if n.Note != "" {
		line += " (" + n.Note + ")"
	}
	if r := n.Ready; r != nil {
		line += "  " + words("Ready="+r.Status, r.Severity, r.Reason) + colon(r.Message)
	}
	return line
}

// conditionLine is "▶ Type=Status Severity Reason age: message  ◀ blocking" for the
// blocking step, "· …" for the others.
func conditionLine(c Condition, now time.Time) string {
	marker, tail := "·", ""
	if c.Blocking {
		marker, tail = "▶", "  ◀ blocking"
	}
	age := ""
	if !c.LastTransitionTime.IsZero() {
		age = duration.HumanDuration(now.Sub(c.LastTransitionTime))
	}
	return words(marker, c.Type+"="+c.Status, c.Severity, c.Reason, age) + colon(c.Message) + tail
}

// words joins the non-empty parts with spaces.
func words(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

func colon(message string) string {
	if message == "" {
		return ""
	}
	return ": " + message
}
