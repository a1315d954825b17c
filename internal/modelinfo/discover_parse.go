package modelinfo

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// The answers endpoints give about their models, read by the pure parsers
// below. Every field is optional: a server fills in those it knows, and a
// field of an unexpected type is left unknown rather than failing the rest.

// listEntry is one entry of an OpenAI-compatible GET /models answer, with
// the fields servers add to it: OpenRouter's context_length, top_provider,
// pricing (US dollars per token, as strings) and architecture (the kinds
// of input the model takes), vLLM's max_model_len, llama.cpp's meta, and
// context_window as some hosted APIs spell it.
type listEntry struct {
	ID            string  `json:"id"`
	OwnedBy       string  `json:"owned_by"`
	ContextLength flexNum `json:"context_length"`
	ContextWindow flexNum `json:"context_window"`
	MaxModelLen   flexNum `json:"max_model_len"`
	TopProvider   struct {
		ContextLength       flexNum `json:"context_length"`
		MaxCompletionTokens flexNum `json:"max_completion_tokens"`
	} `json:"top_provider"`
	Pricing struct {
		Prompt          flexNum `json:"prompt"`
		Completion      flexNum `json:"completion"`
		InputCacheRead  flexNum `json:"input_cache_read"`
		InputCacheWrite flexNum `json:"input_cache_write"`
	} `json:"pricing"`
	Meta *struct {
		NCtxTrain flexNum `json:"n_ctx_train"`
	} `json:"meta"`
	Architecture architecture `json:"architecture"`
}

// architecture is OpenRouter's account of what a model takes and gives;
// a value of another shape reads as empty (unknown). It never fails to
// decode.
type architecture struct {
	InputModalities []string
	// Modality is the older spelling: "text+image->text".
	Modality string
}

// UnmarshalJSON reads input_modalities and modality; fields of another
// type are left unknown.
func (a *architecture) UnmarshalJSON(data []byte) error {
	var v struct {
		InputModalities flexStrings `json:"input_modalities"`
		Modality        flexString  `json:"modality"`
	}
	if json.Unmarshal(data, &v) != nil {
		*a = architecture{}
		return nil
	}
	*a = architecture{InputModalities: v.InputModalities, Modality: string(v.Modality)}
	return nil
}

// flexStrings is a list of strings a server may send as anything else:
// another type reads as nil (unknown). It never fails to decode.
type flexStrings []string

// UnmarshalJSON reads a list of strings; other values are nil.
func (l *flexStrings) UnmarshalJSON(data []byte) error {
	var v []string
	if json.Unmarshal(data, &v) != nil {
		v = nil
	}
	*l = v
	return nil
}

// flexString is a string a server may send as anything else: another
// type reads as "" (unknown). It never fails to decode.
type flexString string

// UnmarshalJSON reads a string; other values are "".
func (s *flexString) UnmarshalJSON(data []byte) error {
	var v string
	if json.Unmarshal(data, &v) != nil {
		v = ""
	}
	*s = flexString(v)
	return nil
}

// inputVision is whether a model list's architecture says the model takes
// pictures: input_modalities naming "image", else the input side of
// modality ("text+image->text"); nil when it says nothing (an empty list
// says nothing either). Pure.
func inputVision(modalities []string, modality string) *bool {
	if len(modalities) > 0 {
		return Bool(containsFold(modalities, "image"))
	}
	in, _, ok := strings.Cut(modality, "->")
	if !ok || strings.TrimSpace(in) == "" {
		return nil
	}
	return Bool(containsFold(strings.Split(in, "+"), "image"))
}

// containsFold reports whether list holds want, ignoring case and
// surrounding space. Pure.
func containsFold(list []string, want string) bool {
	for _, s := range list {
		if strings.EqualFold(strings.TrimSpace(s), want) {
			return true
		}
	}
	return false
}

// flexNum is a number a server may send as a JSON number or as a string
// ("0.0000025"); anything else, negative or not finite reads as 0
// (unknown). It never fails to decode.
type flexNum float64

// UnmarshalJSON reads a number or a numeric string; other values are 0.
func (n *flexNum) UnmarshalJSON(data []byte) error {
	*n = 0
	s := strings.TrimSpace(string(data))
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return nil
	}
	*n = flexNum(v)
	return nil
}

// tokens is n as a token count (0 when out of range).
func (n flexNum) tokens() int {
	if n <= 0 || n > math.MaxInt32 {
		return 0
	}
	return int(n)
}

// perMillion is a price per token as a price per million tokens, rounded
// to a millionth of a dollar so that 0.0000025 reads as 2.5.
func (n flexNum) perMillion() float64 {
	return math.Round(float64(n)*1e6*1e6) / 1e6
}

// llamaCppOwner is llama.cpp's owned_by in its model list.
const llamaCppOwner = "llamacpp"

// listed is what a model list says of one model; llamaCpp reports that
// the server is llama.cpp (its /props tells the context it runs with).
type listed struct {
	info     Info
	found    bool
	llamaCpp bool
}

// parseModelList reads an OpenAI-compatible GET /models answer and picks
// model's entry: the one whose id is model, else the one whose id equals
// it ignoring case, else the only entry of a server that lists one (a
// vLLM or llama.cpp serving one model answers to any name it is given).
// An answer that is not a model list is an error. Pure.
func parseModelList(body []byte, model string) (listed, error) {
	var list struct {
		Data []listEntry `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return listed{}, err
	}
	pick := -1
	for i, e := range list.Data {
		if e.ID == model {
			pick = i
			break
		}
		if pick < 0 && strings.EqualFold(e.ID, model) {
			pick = i
		}
	}
	if pick < 0 && len(list.Data) == 1 {
		pick = 0
	}
	if pick < 0 {
		return listed{}, nil
	}
	e := list.Data[pick]
	return listed{info: entryInfo(e), found: true, llamaCpp: e.Meta != nil || e.OwnedBy == llamaCppOwner}, nil
}

// entryInfo is what one list entry tells: the first window it names
// (context_length, top_provider.context_length, context_window,
// max_model_len, meta.n_ctx_train), the output cap, the prices, and
// whether it takes pictures. Pure.
func entryInfo(e listEntry) Info {
	var info Info
	windows := []flexNum{e.ContextLength, e.TopProvider.ContextLength, e.ContextWindow, e.MaxModelLen}
	if e.Meta != nil {
		windows = append(windows, e.Meta.NCtxTrain)
	}
	for _, w := range windows {
		if info.ContextWindow = w.tokens(); info.ContextWindow > 0 {
			break
		}
	}
	info.MaxOutput = e.TopProvider.MaxCompletionTokens.tokens()
	p := e.Pricing
	info.Price = Price{Input: p.Prompt.perMillion(), Output: p.Completion.perMillion(),
		CacheRead: p.InputCacheRead.perMillion(), CacheWrite: p.InputCacheWrite.perMillion()}
	info.Vision = inputVision(e.Architecture.InputModalities, e.Architecture.Modality)
	return info
}

// parseProps reads llama.cpp's GET /props answer: the context each
// request gets (default_generation_settings.n_ctx, or n_ctx at the top in
// older servers); 0 when it says none. Pure.
func parseProps(body []byte) (int, error) {
	var props struct {
		Settings struct {
			NCtx flexNum `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx flexNum `json:"n_ctx"`
	}
	if err := json.Unmarshal(body, &props); err != nil {
		return 0, err
	}
	if n := props.Settings.NCtx.tokens(); n > 0 {
		return n, nil
	}
	return props.NCtx.tokens(), nil
}

// parseShow reads Ollama's POST /api/show answer: the window is the
// num_ctx its Modelfile sets in parameters, else the architecture's
// context length in model_info ("<general.architecture>.context_length",
// or any "*.context_length" when the architecture is not named); the model
// takes pictures when its capabilities name "vision" (older servers list
// none: unknown). Pure.
func parseShow(body []byte) (Info, error) {
	var show struct {
		Parameters   string                     `json:"parameters"`
		ModelInfo    map[string]json.RawMessage `json:"model_info"`
		Capabilities flexStrings                `json:"capabilities"`
	}
	if err := json.Unmarshal(body, &show); err != nil {
		return Info{}, err
	}
	info := Info{ContextWindow: showWindow(show.Parameters, show.ModelInfo)}
	if len(show.Capabilities) > 0 {
		info.Vision = Bool(containsFold(show.Capabilities, "vision"))
	}
	return info, nil
}

// showWindow is the window an /api/show answer tells: its parameters'
// num_ctx, else its model_info's context length. Pure.
func showWindow(params string, modelInfo map[string]json.RawMessage) int {
	if n := numCtxParameter(params); n > 0 {
		return n
	}
	var arch string
	if raw, ok := modelInfo["general.architecture"]; ok {
		_ = json.Unmarshal(raw, &arch)
	}
	if arch != "" {
		return rawTokens(modelInfo[arch+".context_length"])
	}
	for k, raw := range modelInfo {
		if strings.HasSuffix(k, ".context_length") {
			return rawTokens(raw)
		}
	}
	return 0
}

// rawTokens is a JSON number (or numeric string) as a token count; 0 when
// it is none.
func rawTokens(raw json.RawMessage) int {
	var n flexNum
	if len(bytes.TrimSpace(raw)) == 0 {
		return 0
	}
	_ = n.UnmarshalJSON(raw)
	return n.tokens()
}

// numCtxParameter is the num_ctx of Ollama's parameters text, one
// "name value" per line ("num_ctx                        8192"); 0 when
// it sets none. Pure.
func numCtxParameter(params string) int {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			n, err := strconv.Atoi(f[1])
			if err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
