package modelinfo

import (
	"reflect"
	"testing"
)

func TestParseModelList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		body     string
		model    string
		want     Info
		found    bool
		llamaCpp bool
	}{
		{"openrouter", `{"data":[
			{"id":"openai/gpt-4o","context_length":128000},
			{"id":"anthropic/claude-sonnet-4","context_length":200000,
			 "top_provider":{"context_length":200000,"max_completion_tokens":64000,"is_moderated":false},
			 "pricing":{"prompt":"0.000003","completion":"0.000015","input_cache_read":"0.0000003","input_cache_write":"0.00000375","request":"0"}}]}`,
			"anthropic/claude-sonnet-4",
			Info{ContextWindow: 200000, MaxOutput: 64000, Price: Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}, true, false},
		{"openrouter numbers and a null cap", `{"data":[{"id":"m","context_length":32768,"top_provider":{"max_completion_tokens":null},"pricing":{"prompt":0.0000005,"completion":"0.0000015"}}]}`,
			"m", Info{ContextWindow: 32768, Price: Price{Input: 0.5, Output: 1.5}}, true, false},
		{"openrouter variable pricing is unknown", `{"data":[{"id":"openrouter/auto","context_length":2000000,"pricing":{"prompt":"-1","completion":"-1"}}]}`,
			"openrouter/auto", Info{ContextWindow: 2000000}, true, false},
		{"window only from top_provider", `{"data":[{"id":"m","top_provider":{"context_length":65536}}]}`,
			"m", Info{ContextWindow: 65536}, true, false},
		{"vllm", `{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","owned_by":"vllm","root":"Qwen/Qwen2.5-7B-Instruct","max_model_len":32768,"permission":[]}]}`,
			"Qwen/Qwen2.5-7B-Instruct", Info{ContextWindow: 32768}, true, false},
		{"llama.cpp names its file, answers any name", `{"object":"list","data":[{"id":"/models/llama-3.2-3b.Q4_K_M.gguf","object":"model","owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":128256,"n_ctx_train":131072,"n_embd":3072}}]}`,
			"local", Info{ContextWindow: 131072}, true, true},
		{"context_window as some APIs spell it", `{"data":[{"id":"llama-3.3-70b-versatile","context_window":131072}]}`,
			"llama-3.3-70b-versatile", Info{ContextWindow: 131072}, true, false},
		{"case differs", `{"data":[{"id":"Other","max_model_len":4096},{"id":"MyModel","max_model_len":8192}]}`,
			"mymodel", Info{ContextWindow: 8192}, true, false},
		{"the exact id wins over another case", `{"data":[{"id":"M","max_model_len":4096},{"id":"m","max_model_len":8192}]}`,
			"m", Info{ContextWindow: 8192}, true, false},
		{"plain OpenAI tells nothing", `{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1,"owned_by":"system"},{"id":"gpt-4o-mini","object":"model"}]}`,
			"gpt-4o", Info{}, true, false},
		{"not listed among several", `{"data":[{"id":"a","context_length":1},{"id":"b","context_length":2}]}`, "c", Info{}, false, false},
		{"fields of the wrong type are unknown", `{"data":[{"id":"m","context_length":"lots","max_model_len":true,"pricing":{"prompt":{"x":1}}}]}`,
			"m", Info{}, true, false},
		{"absurd numbers are unknown", `{"data":[{"id":"m","context_length":1e300}]}`, "m", Info{}, true, false},
		{"empty list", `{"data":[]}`, "m", Info{}, false, false},
		{"openrouter input_modalities with image", `{"data":[{"id":"openai/gpt-4o","architecture":{"modality":"text+image->text","input_modalities":["text","image","file"],"output_modalities":["text"]}}]}`,
			"openai/gpt-4o", Info{Vision: Bool(true)}, true, false},
		{"openrouter input_modalities without image", `{"data":[{"id":"deepseek/deepseek-chat","architecture":{"modality":"text+image->text","input_modalities":["text"]}}]}`,
			"deepseek/deepseek-chat", Info{Vision: Bool(false)}, true, false},
		{"the older modality alone", `{"data":[{"id":"m","architecture":{"modality":"text+image->text"}}]}`,
			"m", Info{Vision: Bool(true)}, true, false},
		{"the older modality, text only", `{"data":[{"id":"m","architecture":{"modality":"text->text"}}]}`,
			"m", Info{Vision: Bool(false)}, true, false},
		{"an empty architecture says nothing", `{"data":[{"id":"m","architecture":{"input_modalities":[],"modality":""}}]}`,
			"m", Info{}, true, false},
		{"an architecture of another shape is unknown", `{"data":[{"id":"m","context_length":4096,"architecture":"llama"}]}`,
			"m", Info{ContextWindow: 4096}, true, false},
		{"modalities of another shape are unknown", `{"data":[{"id":"m","architecture":{"input_modalities":"image","modality":7}}]}`,
			"m", Info{}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseModelList([]byte(tt.body), tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.info, tt.want) || got.found != tt.found || got.llamaCpp != tt.llamaCpp {
				t.Fatalf("parseModelList = %+v, want %+v found=%v llamaCpp=%v", got, tt.want, tt.found, tt.llamaCpp)
			}
		})
	}
	for _, bad := range []string{``, `<html>`, `[1,2]`, `{"data":"x"}`} {
		if _, err := parseModelList([]byte(bad), "m"); err == nil {
			t.Errorf("parseModelList(%q): no error", bad)
		}
	}
}

func TestParseProps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"default_generation_settings":{"n_ctx":8192,"params":{"n_predict":-1}},"total_slots":1}`, 8192},
		{`{"n_ctx":4096}`, 4096},
		{`{"default_generation_settings":{"n_ctx":16384},"n_ctx":4096}`, 16384},
		{`{"total_slots":4}`, 0},
		{`{"default_generation_settings":{"n_ctx":-1}}`, 0},
	} {
		got, err := parseProps([]byte(tt.body))
		if err != nil || got != tt.want {
			t.Errorf("parseProps(%s) = %d, %v; want %d", tt.body, got, err, tt.want)
		}
	}
	if _, err := parseProps([]byte("nope")); err == nil {
		t.Error("parseProps of a non-JSON body: no error")
	}
}

func TestParseShow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		body string
		want int
	}{
		{"llama", `{"modelfile":"FROM x","parameters":"stop \"<|eot_id|>\"","details":{"family":"llama"},
			"model_info":{"general.architecture":"llama","general.parameter_count":8030261248,"llama.context_length":131072}}`, 131072},
		{"the Modelfile's num_ctx wins", `{"parameters":"num_ctx                        8192\nstop                           \"<|eot_id|>\"",
			"model_info":{"general.architecture":"llama","llama.context_length":131072}}`, 8192},
		{"another architecture", `{"model_info":{"general.architecture":"qwen2","qwen2.context_length":32768,"llama.context_length":4096}}`, 32768},
		{"architecture not named", `{"model_info":{"gemma3.context_length":131072}}`, 131072},
		{"named architecture without length", `{"model_info":{"general.architecture":"bert"}}`, 0},
		{"nothing", `{"license":"MIT"}`, 0},
		{"a num_ctx that is not a number", `{"parameters":"num_ctx lots","model_info":{"general.architecture":"llama","llama.context_length":2048}}`, 2048},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseShow([]byte(tt.body))
			if err != nil || got.ContextWindow != tt.want || got.MaxOutput != 0 || got.Price.Known() {
				t.Fatalf("parseShow = %+v, %v; want window %d", got, err, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name string
		body string
		want *bool
	}{
		{"a vision model", `{"capabilities":["completion","vision"],"model_info":{"general.architecture":"mllama","mllama.context_length":131072}}`, Bool(true)},
		{"a text model", `{"capabilities":["completion","tools"]}`, Bool(false)},
		{"an older server lists none", `{"model_info":{"general.architecture":"llama","llama.context_length":8192}}`, nil},
		{"an empty list says nothing", `{"capabilities":[]}`, nil},
		{"capabilities of another shape", `{"capabilities":"vision","model_info":{"general.architecture":"llama","llama.context_length":8192}}`, nil},
	} {
		got, err := parseShow([]byte(tt.body))
		if err != nil || !reflect.DeepEqual(got.Vision, tt.want) {
			t.Errorf("%s: parseShow = %+v, %v; want vision %v", tt.name, got, err, fmtBool(tt.want))
		}
	}
	if _, err := parseShow([]byte(`{"model_info":[]}`)); err == nil {
		t.Error("parseShow of a wrong shape: no error")
	}
}

func TestNumCtxParameter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		params string
		want   int
	}{
		{"", 0},
		{"num_ctx 4096", 4096},
		{"temperature 0.7\nnum_ctx    16384\n", 16384},
		{"num_ctx 0", 0},
		{"num_ctx -5", 0},
		{"num_ctx_extra 99", 0},
		{"stop \"num_ctx 5\"", 0},
	} {
		if got := numCtxParameter(tt.params); got != tt.want {
			t.Errorf("numCtxParameter(%q) = %d, want %d", tt.params, got, tt.want)
		}
	}
}

func TestURLs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		base, joined, root string
	}{
		{"http://localhost:11434/v1", "http://localhost:11434/v1/models", "http://localhost:11434/api/show"},
		{"http://localhost:11434/v1/", "http://localhost:11434/v1/models", "http://localhost:11434/api/show"},
		{"http://localhost:11434", "http://localhost:11434/models", "http://localhost:11434/api/show"},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/models", "https://openrouter.ai/api/api/show"},
		{"https://h/openai/v1?api-version=1", "https://h/openai/v1/models?api-version=1", "https://h/openai/api/show?api-version=1"},
	} {
		if got := joinURL(tt.base, "/models"); got != tt.joined {
			t.Errorf("joinURL(%q) = %q, want %q", tt.base, got, tt.joined)
		}
		if got := rootURL(tt.base, "/api/show"); got != tt.root {
			t.Errorf("rootURL(%q) = %q, want %q", tt.base, got, tt.root)
		}
	}
	for base, want := range map[string]bool{"http://localhost:11434/v1": true, "http://gpu-box:11434": true,
		"http://localhost:8080/v1": false, "https://api.openai.com/v1": false, "::": false} {
		if got := OllamaURL(base); got != want {
			t.Errorf("OllamaURL(%q) = %v, want %v", base, got, want)
		}
	}
}
