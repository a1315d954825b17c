// Package fakesearch is a test stand-in for the web search services this
// machine cannot reach. One HTTP server speaks the four APIs web_search
// uses, each as the service does: SearXNG's GET /search?format=json,
// Brave's GET /res/v1/web/search with X-Subscription-Token, Tavily's POST
// /search with a bearer key and Exa's POST /search with x-api-key, each
// answering in its own JSON shape. A wrong key is refused as the service
// refuses it (401), and a failure can be queued: a status with a body and
// a Retry-After. Every request is recorded.
package fakesearch
