package redact

import (
	"strings"
	"testing"
)

// issue23Cases are the secrets found stored verbatim in audit rows (issue 23),
// one or more cases per cause, and the harmless texts each fix must keep.
func issue23Cases() []stringCase {
	hex64 := fakeTail(64, hexLower)
	ghp := fakeSecrets["github-ghp"]
	akia := fakeSecrets["aws-akia"]
	awsSecret := "wJalrXUtnFEMI/K7MDENG/" + fakeTail(18, alphaNum)
	return []stringCase{
		// Assignments with spaces around '=' in written file contents,
		// and the short secret words pw, pass, passwd.
		{"ini-spaced", "[default]\naws_secret_access_key = " + awsSecret + "\nregion = us-east-1", "[default]\naws_secret_access_key = " + Mask + "\nregion = us-east-1"},
		{"env-spaced", "db_password = hunter2 two\nuser = bob", "db_password = " + Mask + "\nuser = bob"},
		{"spaced-after", "DB_PASSWORD= hunter2", "DB_PASSWORD= " + Mask},
		{"go-define", `password := "hunter2"`, `password := "` + Mask + `"`},
		{"httpie-query", "http GET x token==abc123", "http GET x token==" + Mask},
		{"yaml-pw", "db_pw: hunter2", "db_pw: " + Mask},
		{"suffix-pass", "SMTP_PASS=hunter2 ./send", "SMTP_PASS=" + Mask + " ./send"},
		{"suffix-passwd", "admin_passwd = x1", "admin_passwd = " + Mask},
		{"json-spaced", `{"api_key" : "abc123"}`, `{"api_key" : "` + Mask + `"}`},
		{"comparison", "if [ $x != y ]; then :; fi", "if [ $x != y ]; then :; fi"},

		// A secret-named key then its value as the next word, after a setter.
		{"aws-configure-set", "aws configure set aws_secret_access_key " + awsSecret, "aws configure set aws_secret_access_key " + Mask},
		{"git-config", "git config --global github.token abc123def", "git config --global github.token " + Mask},
		{"fish-set", "set -gx DB_PASSWORD hunter2", "set -gx DB_PASSWORD " + Mask},
		{"setter-harmless", "aws configure set region us-east-1 && git config credential.helper store", "aws configure set region us-east-1 && git config credential.helper store"},
		{"set-in-prose", "the rules set for them: a token system", "the rules set for them: a token system"},

		// Options that take a password only for their command.
		{"mysql-glued", "mysql -u root -phunter2 mydb", "mysql -u root -p" + Mask + " mydb"},
		{"mysql-glued-quoted", "mysql -uroot -p'hun ter2' mydb", "mysql -uroot -p'" + Mask + "' mydb"},
		{"mysql-prompt", "mysql -u root -p mydb", "mysql -u root -p mydb"},
		{"mysql-long", "mysql --password=hunter2 mydb", "mysql --password=" + Mask + " mydb"},
		{"mysql-sudo", "sudo -u postgres /usr/bin/mysqldump -phunter2 db > x.sql", "sudo -u postgres /usr/bin/mysqldump -p" + Mask + " db > x.sql"},
		{"pgpassword", "PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=" + Mask + " psql -h db"},
		{"sshpass", "sshpass -p hunter2 ssh host", "sshpass -p " + Mask + " ssh host"},
		{"sshpass-glued", "sshpass -phunter2 ssh host", "sshpass -p" + Mask + " ssh host"},
		{"sshpass-quoted", `sshpass -p 'a b' ssh host`, "sshpass -p " + Mask + " ssh host"},
		{"curl-u", "curl -u alice:hunter2 https://x", "curl -u alice:" + Mask + " https://x"},
		{"curl-user", "curl --user alice:hunter2 https://x", "curl --user alice:" + Mask + " https://x"},
		{"curl-user-eq", "curl --user=alice:hunter2 https://x", "curl --user=alice:" + Mask + " https://x"},
		{"curl-u-glued", "curl -ualice:hunter2 https://x", "curl -ualice:" + Mask + " https://x"},
		{"curl-u-prompt", "curl -u alice https://x", "curl -u alice https://x"},
		{"curl-u-vars", `curl -u "$USER:$PASS" https://x`, `curl -u "$USER:$PASS" https://x`},
		{"userinfo", "git clone https://alice:hunter2@example.com/r.git", "git clone https://alice:" + Mask + "@example.com/r.git"},
		{"docker-login", "docker login -u bob -p hunter2 ghcr.io", "docker login -u bob -p " + Mask + " ghcr.io"},
		{"docker-port", "docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"},
		{"7z", "7z x -phunter2 a.7z", "7z x -p" + Mask + " a.7z"},
		{"redis-cli", "redis-cli -a hunter2 ping", "redis-cli -a " + Mask + " ping"},
		{"htpasswd", "htpasswd -b .htpasswd bob hunter2", "htpasswd -b .htpasswd bob " + Mask},
		{"gh-secret", "gh secret set API_KEY --body hunter2", "gh secret set API_KEY --body " + Mask},
		{"kubectl-literal", "kubectl create secret generic x --from-literal=foo=bar", "kubectl create secret generic x --from-literal=foo=" + Mask},
		{"bash-c", `bash -c "mysql -uroot -phunter2 db"`, `bash -c "mysql -uroot -p` + Mask + ` db"`},

		// A bare 64-digit hex run is masked unless labelled as a digest.
		{"hex-bare", hex64, Mask},
		{"hex-arg", "node sign.js " + hex64, "node sign.js " + Mask},
		{"hex-env", "PK=" + hex64 + " node x.js", "PK=" + Mask + " node x.js"},
		{"hex-sha256", "sha256 " + hex64, "sha256 " + hex64},
		{"hex-digest", "digest: sha256:" + hex64, "digest: sha256:" + hex64},
		{"hex-tx", "tx hash " + hex64, "tx hash " + hex64},
		{"hex-sum-list", hex64 + " *file.bin", hex64 + " *file.bin"},

		// Secrets split by shell quoting.
		{"split-akia", "echo " + akia[:4] + "''" + akia[4:], "echo " + Mask},
		{"split-ghp", `echo "` + ghp[:4] + `"'` + ghp[4:] + `' done`, "echo " + Mask + " done"},
		{"split-value", "tool --password 'hun''ter2' run", "tool --password " + Mask + " run"},
		{"split-assign", `TOKEN=ab"cd" ./run`, "TOKEN=" + Mask + " ./run"},
		{"split-key", `"PASS"WORD=hunter2 ./run`, `"PASS"WORD=` + Mask + ` ./run`},
		{"split-backslash", "echo " + akia[:4] + `\` + akia[4:], "echo " + Mask},
		{"split-ansi", "echo $'" + ghp[:4] + "'" + ghp[4:], "echo " + Mask},
		{"quoted-header", `curl -H "Authorization: Bearer abc123" https://x`, `curl -H "Authorization: Bearer ` + Mask + `" https://x`},
		{"apostrophes", `git commit -m "don't log the token it's fine"`, `git commit -m "don't log the token it's fine"`},

		// A path in a reason is not a secret.
		{"deny-reason", `cat would read "~/.aws/credentials": /home/u/.aws/credentials is in the denied path "~/.aws/**"`, `cat would read "~/.aws/credentials": /home/u/.aws/credentials is in the denied path "~/.aws/**"`},
		{"path-colon", "~/.aws/credentials: No such file or directory", "~/.aws/credentials: No such file or directory"},
		{"paths", "cat ~/.ssh/id_rsa /etc/shadow ~/.aws/credentials ~/.netrc", "cat ~/.ssh/id_rsa /etc/shadow ~/.aws/credentials ~/.netrc"},
		{"file-key", `{"secrets.json": "x", "token.txt": "y"}`, `{"secrets.json": "x", "token.txt": "y"}`},
		{"path-contents", "~/.aws/credentials holds aws_secret_access_key = " + awsSecret, "~/.aws/credentials holds aws_secret_access_key = " + Mask},
		{"url-path-token", "https://x/reset/token=abc123", "https://x/reset/token=" + Mask},
	}
}

func TestStringIssue23(t *testing.T) {
	for _, tt := range issue23Cases() {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("String(String(%q)) = %q, want %q", tt.in, again, got)
			}
		})
	}
}

func TestParseShell(t *testing.T) {
	for _, tt := range []struct {
		in    string
		words []string
	}{
		{`a 'b c' "d\"e"`, []string{"a", "b c", `d"e`}},
		{`AKIA''X "ghp_"'y'`, []string{"AKIAX", "ghp_y"}},
		{"a\\ b;c|d&&e 2>&1", []string{"a b", "c", "d", "e", "2", "1"}},
		{`unclosed "quote`, []string{"unclosed", "quote"}},
		{`$'a\tb'`, []string{"a\tb"}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			sh := parseShell(tt.in)
			var got []string
			for _, w := range sh.words {
				got = append(got, sh.val(w))
			}
			if strings.Join(got, "|") != strings.Join(tt.words, "|") {
				t.Errorf("parseShell(%q) words = %q, want %q", tt.in, got, tt.words)
			}
		})
	}
}
