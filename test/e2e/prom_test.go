package e2e

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeProm answers like the Prometheus HTTP API.
func fakeProm(t *testing.T) *Prom {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		switch q := r.URL.Query().Get("query"); q {
		case "up":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"otelcol"},"value":[1700000000.1,"1"]},{"metric":{"job":"x"},"value":[1700000000.1,"0"]}]}}`))
		case "scalar(1)":
			w.Write([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1700000000.1,"2.5"]}}`))
		case "range":
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		case "nan":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
		}
	})
	mux.HandleFunc("/api/v1/series", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query()["match[]"]; !slices.Equal(got, []string{`a{b="c"}`}) {
			t.Errorf("match[] = %q", got)
		}
		w.Write([]byte(`{"status":"success","data":[{"__name__":"a","b":"c","le":"0.5"}]}`))
	})
	mux.HandleFunc("/api/v1/label/__name__/values", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"success","data":["up","a_total","b"]}`))
	})
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("start") != "1700000000.000" || q.Get("end") != "1700000060.500" || q.Get("step") != "1" {
			t.Errorf("query_range start/end/step = %s %s %s", q.Get("start"), q.Get("end"), q.Get("step"))
		}
		switch q.Get("query") {
		case "m":
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1700000000,"NaN"],[1700000001,"3"]]},{"metric":{"a":"2"},"values":[[1700000000,"4"]]}]}}`))
		default:
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
		}
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ready")) })
	mux.HandleFunc("/broken/api/v1/query", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &Prom{Base: srv.URL, Client: srv.Client()}
}

func TestPromQuery(t *testing.T) {
	p := fakeProm(t)
	ctx := context.Background()
	got, err := p.Query(ctx, "up")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Labels["job"] != "otelcol" || got[0].Value != 1 || got[1].Value != 0 {
		t.Errorf("Query(up) = %+v", got)
	}
	sc, err := p.Query(ctx, "scalar(1)")
	if err != nil || len(sc) != 1 || sc[0].Value != 2.5 {
		t.Errorf("Query(scalar) = %+v, %v", sc, err)
	}
	nan, err := p.Query(ctx, "nan")
	if err != nil || len(nan) != 1 || nan[0].Value == nan[0].Value {
		t.Errorf("Query(nan) = %+v, %v; want one NaN sample", nan, err)
	}
	tests := []struct{ query, want string }{
		{"bad(", "bad_data: parse error"},
		{"range", `result type "matrix"`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if _, err := p.Query(ctx, tt.query); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Query(%q) error = %v, want %q", tt.query, err, tt.want)
			}
		})
	}
	broken := &Prom{Base: p.Base + "/broken", Client: p.Client}
	if _, err := broken.Query(ctx, "up"); err == nil || !strings.Contains(err.Error(), "not an API answer") {
		t.Errorf("error = %v", err)
	}
}

func TestPromSeriesLabelsReady(t *testing.T) {
	p := fakeProm(t)
	ctx := context.Background()
	series, err := p.Series(ctx, `a{b="c"}`)
	if err != nil || len(series) != 1 || series[0]["le"] != "0.5" {
		t.Errorf("Series = %v, %v", series, err)
	}
	names, err := p.LabelValues(ctx, "__name__")
	if err != nil || !slices.Equal(names, []string{"a_total", "b", "up"}) {
		t.Errorf("LabelValues = %q, %v; want them sorted", names, err)
	}
	if err := p.Ready(ctx); err != nil {
		t.Errorf("Ready = %v", err)
	}
	down := &Prom{Base: p.Base + "/nowhere"}
	if err := down.Ready(ctx); err == nil {
		t.Error("Ready on a 404 must fail")
	}
}

func TestPoll(t *testing.T) {
	t.Run("succeeds", func(t *testing.T) {
		n := 0
		err := Poll(context.Background(), time.Millisecond, func(context.Context) error {
			n++
			if n < 3 {
				return notYet("n=%d", n)
			}
			return nil
		})
		if err != nil || n != 3 {
			t.Errorf("Poll = %v after %d calls", err, n)
		}
	})
	t.Run("hard error stops at once", func(t *testing.T) {
		boom := errors.New("boom")
		n := 0
		err := Poll(context.Background(), time.Millisecond, func(context.Context) error { n++; return boom })
		if !errors.Is(err, boom) || n != 1 {
			t.Errorf("Poll = %v after %d calls", err, n)
		}
	})
	t.Run("timeout says what was missing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Poll(ctx, time.Millisecond, func(context.Context) error { return notYet("count 3, want 5") })
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "count 3, want 5") {
			t.Errorf("Poll = %v", err)
		}
	})
}

func TestPromQueryRange(t *testing.T) {
	p := fakeProm(t)
	start := time.Unix(1700000000, 0)
	end := start.Add(60500 * time.Millisecond)
	got, err := p.QueryRange(context.Background(), "m", start, end, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Value == got[0].Value || got[1].Value != 3 || got[2].Labels["a"] != "2" || got[2].Value != 4 {
		t.Errorf("QueryRange = %+v; want NaN, 3 of a=1 and 4 of a=2", got)
	}
	if _, err := p.QueryRange(context.Background(), "v", start, end, time.Second); err == nil || !strings.Contains(err.Error(), "matrix") {
		t.Errorf("a vector answer: error %v, want one saying a matrix was expected", err)
	}
}
