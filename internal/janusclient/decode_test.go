package janusclient

import "testing"

func TestDecodeEventsObjectAndArray(t *testing.T) {
	one, err := decodeEvents([]byte(`{"janus":"event","session_id":1,"sender":2,"transaction":"x","plugindata":{"plugin":"p","data":{"error_code":413,"error":"bad"}}}`))
	if err != nil || len(one) != 1 || one[0].Sender != 2 {
		t.Fatalf("%v %+v", err, one)
	}
	if pe := one[0].PluginError(); pe == nil || pe.Code != 413 || pe.Plugin != "p" || Code(pe) != 413 {
		t.Errorf("plugin error %+v", pe)
	}
	many, err := decodeEvents([]byte(`[{"janus":"media","mid":"1","type":"video","receiving":true},{"janus":"keepalive"}]`))
	if err != nil || len(many) != 2 || many[0].Receiving == nil || !*many[0].Receiving || many[1].Janus != "keepalive" {
		t.Fatalf("%v %+v", err, many)
	}
	if _, err := decodeEvents([]byte(`{"janus":`)); err == nil {
		t.Error("truncated JSON accepted")
	}
}

func FuzzDecodeEvents(f *testing.F) {
	f.Add([]byte(`{"janus":"success","transaction":"t","data":{"id":1}}`))
	f.Add([]byte(`[{"janus":"event","plugindata":{"plugin":"x","data":{"error_code":1}}},{"janus":"keepalive"}]`))
	f.Add([]byte(`{"janus":"error","error":{"code":458,"reason":"No such session"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := decodeEvents(b)
		if err != nil {
			return
		}
		for _, e := range evs {
			_ = e.PluginError()
			if len(e.Raw) == 0 {
				t.Fatal("event without its raw message")
			}
		}
	})
}
