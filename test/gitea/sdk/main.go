// gitea-sdk-test: the calls a user of the Gitea Go SDK makes, against the server at
// $GITEA_URL: tokens (created, listed with timestamps, used in every form Gitea
// accepts, deleted), users, repositories (create, get, list, search with paging),
// git push with a token, GPG keys (matching and mismatching e-mail, by id, delete),
// a signed commit's verification, branch protections (create, get, edit, list, delete),
// and migration with service gitea + auth_token.
// Prints one line per step ("ok <step>" or "FAIL <step>: <why>") and exits 1 when a
// step failed. Inputs (environment):
//
//	GITEA_URL, ADMIN_USER, ADMIN_PASS   the server and a site admin's password
//	GPG_MATCH_KEY, GPG_MATCH_KEYID      armored key with the e-mail bob@example.com, its key ID
//	GPG_OTHER_KEY                       armored key with another e-mail
//	SIGNED_WORKTREE, SIGNED_SHA         a git work tree whose main is a commit signed by that key
//	ALLOW_MIGRATE_LOOPBACK=1            the server may migrate from itself
package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
)

var failed int

func step(name string, fn func() error) {
	if err := fn(); err != nil {
		failed++
		fmt.Printf("FAIL %s: %v\n", name, err)
		return
	}
	fmt.Printf("ok %s\n", name)
}

func need(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

func status(resp *gitea.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

func env(k string) string {
	v := os.Getenv(k)
	if v == "" {
		fmt.Fprintf(os.Stderr, "gitea-sdk-test: %s is not set\n", k)
		os.Exit(2)
	}
	return v
}

func client(base string, opts ...gitea.ClientOption) *gitea.Client {
	c, err := gitea.NewClient(base, opts...)
	if err != nil {
		fmt.Printf("FAIL client: %v\n", err)
		os.Exit(1)
	}
	return c
}

func main() {
	base := env("GITEA_URL")
	admin := client(base, gitea.SetBasicAuth(env("ADMIN_USER"), env("ADMIN_PASS")))
	const bob, bobPass, bobMail = "bob", "bob-pass-12", "bob@example.com"
	var token string
	var bobc *gitea.Client

	step("version", func() error {
		v, _, err := admin.ServerVersion()
		if err != nil {
			return err
		}
		return need(v != "" && v != "development", "version %q", v)
	})
	step("admin-create-user", func() error {
		no := false
		u, _, err := admin.AdminCreateUser(gitea.CreateUserOption{Username: bob, Email: bobMail, Password: bobPass, MustChangePassword: &no})
		if err != nil {
			return err
		}
		return need(u.UserName == bob && u.Email == bobMail, "user %+v", u)
	})
	basic := client(base, gitea.SetBasicAuth(bob, bobPass))
	step("token-create", func() error {
		t, _, err := basic.CreateAccessToken(gitea.CreateAccessTokenOption{Name: "sdk", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll}})
		if err != nil {
			return err
		}
		token = t.Token
		// Gitea leaves the times zero in this answer (githost fills them); the list has them
		return need(len(t.Token) == 40 && t.TokenLastEight == t.Token[32:], "token %+v", t)
	})
	if token == "" {
		os.Exit(1)
	}
	bobc = client(base, gitea.SetToken(token))
	step("token-list-timestamps", func() error {
		ts, _, err := basic.ListAccessTokens(gitea.ListAccessTokensOptions{})
		if err != nil {
			return err
		}
		for _, t := range ts {
			if t.Name == "sdk" {
				return need(t.Token == "" && !t.Created.IsZero() && !t.Updated.IsZero() && time.Since(t.Created) < time.Hour, "token %+v", t)
			}
		}
		return fmt.Errorf("token sdk not listed: %+v", ts)
	})
	forms := map[string]gitea.ClientOption{
		"token-header":              gitea.SetToken(token),
		"basic-owner-token":         gitea.SetBasicAuth(bob, token),
		"basic-any-name-token":      gitea.SetBasicAuth("someone-else", token),
		"basic-token-as-name":       gitea.SetBasicAuth(token, ""),
		"basic-token-x-oauth-basic": gitea.SetBasicAuth(token, "x-oauth-basic"),
	}
	for _, name := range []string{"token-header", "basic-owner-token", "basic-any-name-token", "basic-token-as-name", "basic-token-x-oauth-basic"} {
		c := client(base, forms[name])
		step("auth-"+name, func() error {
			u, _, err := c.GetMyUserInfo()
			if err != nil {
				return err
			}
			return need(u.UserName == bob, "acts as %q", u.UserName)
		})
	}
	step("auth-wrong-token-401", func() error {
		_, resp, err := client(base, gitea.SetGiteaVersion(""), gitea.SetBasicAuth(bob, strings.Repeat("f", 40))).GetMyUserInfo()
		return need(err != nil && status(resp) == http.StatusUnauthorized, "status %d, err %v", status(resp), err)
	})
	step("user-get", func() error {
		u, _, err := client(base).GetUserInfo(bob)
		if err != nil {
			return err
		}
		return need(u.UserName == bob && u.ID > 0, "user %+v", u)
	})

	for _, r := range []struct {
		name string
		priv bool
		init bool
	}{{"sdk-priv", true, true}, {"sdk-pub", false, true}, {"sdk-signed", false, false}} {
		step("repo-create-"+r.name, func() error {
			repo, _, err := bobc.CreateRepo(gitea.CreateRepoOption{Name: r.name, Private: r.priv, AutoInit: r.init, Description: r.name + " via the SDK", DefaultBranch: "main"})
			if err != nil {
				return err
			}
			return need(repo.Name == r.name && repo.Private == r.priv && repo.Empty == !r.init && repo.Owner != nil && repo.Owner.UserName == bob, "repo %+v", repo)
		})
	}
	step("repo-get", func() error {
		r, _, err := bobc.GetRepo(bob, "sdk-priv")
		if err != nil {
			return err
		}
		return need(r.FullName == bob+"/sdk-priv" && r.Permissions != nil && r.Permissions.Admin && r.DefaultBranch == "main" && !r.Created.IsZero() &&
			strings.HasSuffix(r.CloneURL, "/bob/sdk-priv.git") && r.HasCode, "repo %+v", r)
	})
	step("repo-get-private-anonymous-404", func() error {
		_, resp, err := client(base).GetRepo(bob, "sdk-priv")
		return need(err != nil && status(resp) == http.StatusNotFound, "status %d", status(resp))
	})
	step("repo-list-mine", func() error {
		rs, _, err := bobc.ListMyRepos(gitea.ListReposOptions{})
		if err != nil {
			return err
		}
		return need(len(rs) == 3, "%d repos", len(rs))
	})
	step("repo-list-user-anonymous", func() error {
		rs, _, err := client(base).ListUserRepos(bob, gitea.ListReposOptions{})
		if err != nil {
			return err
		}
		return need(len(rs) == 2, "%d repos (the private one must not be listed)", len(rs))
	})
	step("repo-search-paging", func() error {
		rs, resp, err := bobc.SearchRepos(gitea.SearchRepoOptions{Keyword: "sdk", ListOptions: gitea.ListOptions{Page: 1, PageSize: 2}})
		if err != nil {
			return err
		}
		return need(len(rs) == 2 && resp.Header.Get("X-Total-Count") == "3" && resp.NextPage == 2 && resp.LastPage == 2,
			"%d repos, total %q, next %d, last %d", len(rs), resp.Header.Get("X-Total-Count"), resp.NextPage, resp.LastPage)
	})

	step("git-push-with-token", func() error {
		u := strings.Replace(base, "://", "://oauth2:"+token+"@", 1) + "/bob/sdk-signed.git"
		cmd := exec.Command("git", "push", "-q", u, "main:main")
		cmd.Dir = env("SIGNED_WORKTREE")
		out, err := cmd.CombinedOutput()
		return need(err == nil, "git push: %v: %s", err, out)
	})

	var keyID int64
	step("gpg-key-mismatching-email-refused", func() error {
		_, resp, err := bobc.CreateGPGKey(gitea.CreateGPGKeyOption{ArmoredKey: env("GPG_OTHER_KEY")})
		return need(err != nil && status(resp) == http.StatusNotFound, "status %d, err %v", status(resp), err)
	})
	step("gpg-key-matching-email", func() error {
		k, _, err := bobc.CreateGPGKey(gitea.CreateGPGKeyOption{ArmoredKey: env("GPG_MATCH_KEY")})
		if err != nil {
			return err
		}
		keyID = k.ID
		return need(k.KeyID == env("GPG_MATCH_KEYID") && len(k.Emails) == 1 && k.Emails[0].Email == bobMail && k.Emails[0].Verified && k.CanSign, "key %+v", k)
	})
	step("gpg-key-get-by-id", func() error {
		k, _, err := bobc.GetGPGKey(keyID)
		if err != nil {
			return err
		}
		return need(k.ID == keyID && k.KeyID == env("GPG_MATCH_KEYID"), "key %+v", k)
	})
	step("gpg-key-list", func() error {
		ks, _, err := bobc.ListMyGPGKeys(&gitea.ListGPGKeysOptions{})
		if err != nil {
			return err
		}
		return need(len(ks) == 1, "%d keys", len(ks))
	})
	step("commit-verification", func() error {
		c, _, err := bobc.GetSingleCommit(bob, "sdk-signed", env("SIGNED_SHA"))
		if err != nil {
			return err
		}
		v := c.RepoCommit.Verification
		return need(v != nil && v.Verified && strings.Contains(v.Reason, env("GPG_MATCH_KEYID")) && strings.Contains(v.Signature, "BEGIN PGP SIGNATURE") && v.Payload != "",
			"verification %+v", v)
	})

	if os.Getenv("ALLOW_MIGRATE_LOOPBACK") == "1" {
		step("branch-protection", func() error {
		const repo = "sdk-signed"
		bp, _, err := bobc.CreateBranchProtection(bob, repo, gitea.CreateBranchProtectionOption{RuleName: "main", EnablePush: true, RequireSignedCommits: true})
		if err != nil {
			return err
		}
		if bp.RuleName != "main" || bp.BranchName != "main" || !bp.RequireSignedCommits || !bp.EnablePush || bp.EnablePushWhitelist {
			return fmt.Errorf("created %+v", bp)
		}
		if _, resp, err := bobc.CreateBranchProtection(bob, repo, gitea.CreateBranchProtectionOption{RuleName: "main"}); err == nil || status(resp) != http.StatusForbidden {
			return fmt.Errorf("a second rule main: status %d", status(resp))
		}
		got, _, err := bobc.GetBranchProtection(bob, repo, "main")
		if err != nil || !got.RequireSignedCommits {
			return fmt.Errorf("get: %v %+v", err, got)
		}
		off := false
		ed, _, err := bobc.EditBranchProtection(bob, repo, "main", gitea.EditBranchProtectionOption{RequireSignedCommits: &off})
		if err != nil || ed.RequireSignedCommits || !ed.EnablePush {
			return fmt.Errorf("edit: %v %+v", err, ed)
		}
		list, _, err := bobc.ListBranchProtections(bob, repo, gitea.ListBranchProtectionsOptions{})
		if err != nil || len(list) != 1 {
			return fmt.Errorf("list: %v %d rules", err, len(list))
		}
		if _, err := bobc.DeleteBranchProtection(bob, repo, "main"); err != nil {
			return err
		}
		_, resp, err := bobc.GetBranchProtection(bob, repo, "main")
		return need(err != nil && status(resp) == http.StatusNotFound, "after delete: status %d", status(resp))
	})
	step("migrate-service-gitea-auth-token", func() error {
			r, _, err := bobc.MigrateRepo(gitea.MigrateRepoOption{
				CloneAddr: base + "/bob/sdk-priv.git", Service: gitea.GitServiceGitea, AuthToken: token,
				RepoName: "sdk-migrated", RepoOwner: bob, Private: true,
			})
			if err != nil {
				return err
			}
			return need(r.Name == "sdk-migrated" && !r.Empty && r.Private, "repo %+v", r)
		})
		step("migrate-without-token-fails", func() error {
			_, resp, err := bobc.MigrateRepo(gitea.MigrateRepoOption{CloneAddr: base + "/bob/sdk-priv.git", RepoName: "sdk-nope", RepoOwner: bob})
			return need(err != nil && status(resp) >= 400, "status %d", status(resp))
		})
	}

	step("gpg-key-delete", func() error {
		if _, err := bobc.DeleteGPGKey(keyID); err != nil {
			return err
		}
		_, resp, err := bobc.GetGPGKey(keyID)
		return need(err != nil && status(resp) == http.StatusNotFound, "after delete: status %d", status(resp))
	})
	step("token-delete", func() error {
		if _, err := basic.DeleteAccessToken("sdk"); err != nil {
			return err
		}
		_, resp, err := bobc.GetMyUserInfo()
		return need(err != nil && status(resp) == http.StatusUnauthorized, "after delete: status %d", status(resp))
	})

	if failed > 0 {
		fmt.Printf("%d step(s) failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("all steps passed")
}
