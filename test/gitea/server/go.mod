// Test tooling only (never product code): pins code.gitea.io/gitea so that
// test/gitea/build-gitea.sh can build a real Gitea from the Go module proxy,
// as a differential oracle for githost. `go install pkg@version` refuses a
// module with replace directives, so this wrapper copies Gitea v1.26.0's
// replace block (its go.mod, verbatim).
module strait.test/gitea/server

go 1.26.2

require code.gitea.io/gitea v1.26.0

replace github.com/jaytaylor/html2text => github.com/Necoro/html2text v0.0.0-20250804200300-7bf1ce1c7347

replace github.com/nektos/act => gitea.com/gitea/act v0.261.10

replace github.com/urfave/cli/v3 => github.com/urfave/cli/v3 v3.4.1

replace go.yaml.in/yaml/v4 => go.yaml.in/yaml/v4 v4.0.0-rc.3

replace github.com/Azure/azure-sdk-for-go/sdk/azcore => github.com/Azure/azure-sdk-for-go/sdk/azcore v1.19.0

replace github.com/Azure/azure-sdk-for-go/sdk/storage/azblob => github.com/Azure/azure-sdk-for-go/sdk/storage/azblob v1.6.2

replace github.com/microsoft/go-mssqldb => github.com/microsoft/go-mssqldb v1.9.7
