// Test tooling only (never product code): drives a Gitea-compatible server (githost,
// or a real Gitea as the oracle) with the real Gitea Go SDK, pinned here. Built by
// test/gitea/build-gitea.sh; run by test/gitea/sdk.test.ts.
module strait.test/gitea/sdk

go 1.26

require code.gitea.io/sdk/gitea v0.24.1

require (
	github.com/42wim/httpsig v1.2.4 // indirect
	github.com/davidmz/go-pageant v1.0.2 // indirect
	github.com/go-fed/httpsig v1.1.0 // indirect
	github.com/hashicorp/go-version v1.8.0 // indirect
	golang.org/x/crypto v0.49.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
)
