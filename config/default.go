package config

// defaultFile is the policy file `warden init` writes. It must load with no
// problems into exactly Default(), and stay byte for byte the same when Set
// rewrites it (both are tested), so keep it in the layout the encoder writes:
// two-space indents, no blank lines inside a section.
const defaultFile = `# warden policy: what your agents may do, and when a human must say yes.
# ` + "`warden config validate`" + ` checks this file; ` + "`warden config set KEY VALUE`" + ` edits it.
# Unknown keys are errors. A section with an error is ignored as a whole: warden
# uses that section's defaults and records a config_invalid security event.

version: 1 # file format version; must be 1

safety:
  # Most one transaction may move, in USD; 0 means nothing may be spent. Default 500.
  maxTransactionAmount: 500
  # Most that may be spent in any 24 hours, in USD; 0 means nothing. Default 2000.
  dailySpendCap: 2000
  # Emergency stop: while true, every tool above tier 1 is blocked. Default false.
  killSwitchActive: false
  # Tokens that may be traded; [] means any token not blocked. Default [].
  allowedTokens: []
  # Tokens that may never be traded. Default [SQUID, SAFEMARS].
  blockedTokens: [SQUID, SAFEMARS]
  # Let turns with no human present use tier 3 tools. Default false.
  autopilotEnabled: false

tools:
  # Tier per tool: 1 read only (never asks), 2 confirm once per session,
  # 3 confirm every time, 4 manual only (a fresh human yes every time).
  # Unlisted tools are tier 3. Deleting a line here keeps that tool's default.
  tiers:
    get_price: 1 # read a price; default 1
    get_balance: 1 # read a balance; default 1
    read_file: 1 # default 1
    web_search: 1 # default 1
    analyze_market: 2 # default 2
    write_file: 3 # default 3
    patch: 3 # edit files; default 3
    buy_token: 3 # default 3
    swap_token: 3 # default 3
    transfer_token: 4 # send tokens; default 4
    unkill: 4 # turn the kill switch off; always 4, cannot be lowered
  # Checked in order: the first override whose conditions all hold sets the tier.
  # Optional conditions: max_amount_usd (moves at most this many USD) and
  # recipients (pays one of these; never empty). Default: the swap_token one.
  overrides:
    # Example: transfers to your own addresses at tier 3 instead of 4.
    # - tool: transfer_token
    #   recipients: ["0xYOUR_ADDRESS", "0xYOUR_OTHER_ADDRESS"]
    #   tier: 3
    #
    # Small swaps (at most 100 USD) are tier 2.
    - tool: swap_token
      max_amount_usd: 100
      tier: 2
  # Tools whose calls are always denied, by name or pattern (* and ? are
  # wildcards); the MCP proxy (warden mcp) also hides them from the agent.
  # MCP tools are named mcp__SERVER__TOOL. Default [].
  denied: []

shell:
  # Allow project task runners (make, npm run, go test, cargo build, pytest,
  # ./scripts/*.sh); false sends them to the sandbox. Default true.
  allow_task_runners: true
  # Extra command prefixes, matched after wrappers like sudo are unwrapped:
  # safe allows an otherwise unknown command (never overriding a rule that
  # denies), suspicious sends it to the sandbox, destructive denies it.
  safe: [] # e.g. ["kubectl get"]; default []
  suspicious: [] # default []
  destructive: [] # e.g. ["terraform destroy"]; default []
  # Rewrites applied after a command is judged; the result is judged again.
  replacements: [] # e.g. [{from: "npm install", to: "bun install"}]; default []
  # Commands that run on the host, outside the sandbox, once the guard allows
  # them (each still decided and audited): for tools that need the host, such
  # as git push over SSH or docker. Default none.
  host: [] # e.g. ["git push", "docker"]; default []

filesystem:
  # The directory agents may read, write, list and delete in freely. "" means
  # $WARDEN_HOME/sandbox/files, which warden init creates. Default "".
  workspace: ""
  # Tried in order after the workspace: the first rule whose path matches and
  # whose actions include the request's decides; level auto allows, ask asks.
  # Anything no rule matches is denied. Paths are globs (** crosses
  # directories, ~ is your home); a relative path is relative to the project,
  # the agent's working directory, unless that is / or your home or above it.
  # Default: the project may be read, listed and written, as the agent's
  # sandboxed commands write it (a write to sandbox.protected_paths, such as
  # .claude/ or .git/config, asks); deletes ask.
  allowed_paths:
    - path: "**" # everything in the project
      actions: [read, list, write] # may be read, listed and written
      level: auto # without asking
    - path: "**" # everything in the project
      actions: [delete] # may be deleted
      level: ask # after asking
  # Always denied, over the workspace too, whether a path names them or a
  # symlink leads there; letter case is ignored. warden's own home (policy,
  # audit log, keys) is always denied as well. Default: the list below.
  denied_paths: ["~/.ssh/**", "~/.gnupg/**", "~/.aws/**", "~/.config/gcloud/**", "~/.kube/**", "~/.netrc", "/etc/**", "/usr/**", "/var/**"]

sandbox:
  # Every command an agent runs goes into a sandbox: an allowed command in
  # the workspace profile, one the shell guard finds suspicious in guard.
  # Isolation: off, light, standard or max. With off, allowed and sandboxed
  # commands ask a human instead (see unsafe_host_when_unavailable).
  # Default standard.
  mode: standard
  # Which engine runs sandboxes: auto (best available), native or docker.
  # Default auto.
  engine: auto
  # Where the kernel lacks a feature a mode needs (user namespaces, a
  # memory cgroup), true refuses to run the command; false runs it with
  # what the kernel has and says what is missing. Default false.
  strict: false
  # Lets a profile, or warden exec --mode off, run a command with no
  # isolation at all (still decided and audited). Default false.
  unsafe_allow_off: false
  # Where no sandbox can run (another OS, no Landlock, mode off), true runs
  # allowed commands on the host, each audited; false asks a human first.
  # Default false.
  unsafe_host_when_unavailable: false
  # warden exec with no session (a command you run by hand, a script's)
  # runs in a sandbox kept for the one-shot runs of its directory, started
  # after the first and stopped after 5 idle minutes: each run has it
  # alone and finds it as new (no process, /tmp or IPC object of an earlier
  # run), and starts in a fraction of the time. false builds a sandbox for
  # every run. Default true.
  keep_one_shot: true
  # Masked in every sandbox, on top of filesystem.denied_paths and warden's
  # home: the common credential stores (keys, cloud and registry logins,
  # the agent hosts' own logins, database passwords, wallets, chat
  # sessions, shell histories). A path ending in / is a directory made
  # (mode 0700) when missing, so that what appears there later stays masked.
  # Default: the list below.
  secret_paths: ["~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.docker/config.json", "~/.git-credentials", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.config/gh", "~/.password-store", "~/.local/share/keyrings", "~/.pki", "~/.config/google-chrome", "~/.config/chromium", "~/.mozilla", "~/.config/BraveSoftware", "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.config/hub", "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.bash_history", "~/.zsh_history", "~/.claude/.credentials.json", "~/.claude.json", "~/.codex/auth.json", "~/.gemini/oauth_creds.json", "~/.config/github-copilot", "~/.pgpass", "~/.my.cnf", "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.gradle/gradle.properties", "~/.gem/credentials", "~/.config/composer/auth.json", "~/.terraformrc", "~/.config/glab-cli", "~/.config/doctl", "~/.fly", "~/.config/rclone", "~/.s3cfg", "~/.boto", "~/.oci", "~/.databrickscfg", "~/.huggingface", "~/.cache/huggingface/token", "~/.config/configstore", "~/.config/op", "~/.config/solana", "~/.ethereum/keystore", "~/.foundry/keystores", "~/.bitcoin", "~/.electrum", "~/.config/Slack", "~/.config/discord", "~/.config/Signal", "~/.thunderbird", "~/.local/share/kwalletd", "~/.local/share/fish/fish_history", "~/.python_history", "~/.psql_history", "~/.mysql_history", "~/.node_repl_history", "~/.cache/git/credential/", "~/.git-credential-cache", "~/.config/git/credentials", "~/.yarnrc.yml", "~/.config/pip/pip.conf", "~/.pip/pip.conf", "~/.config/pypoetry/auth.toml", "~/.config/containers/auth.json", "~/.dockercfg", "~/.ivy2/.credentials", "~/.sbt/.credentials", "~/.pulumi/credentials.json", "~/.config/sops/age", "~/.config/helm/registry", "~/.minikube/profiles", "~/.minikube/client.key", "~/.android/adbkey", "~/.ollama/id_ed25519", "~/.local/share/opencode/auth.json", "~/.continue", "~/.config/Bitwarden CLI", "~/.config/microsoft-edge", "~/.config/vivaldi", "~/.config/opera", "~/snap/chromium", "~/snap/firefox", "~/.var/app/org.mozilla.firefox", "~/.var/app/com.google.Chrome", "~/.var/app/org.chromium.Chromium", "~/.msmtprc", "~/.mbsyncrc", "~/.fetchmailrc", "~/.config/aerc/accounts.conf", "~/.cloudflared", "~/.wrangler", "~/.config/.wrangler", "~/.supabase", "~/.config/netlify", "~/.local/share/com.vercel.cli", "~/.config/stripe", "~/.ngrok2", "~/.config/ngrok", "~/.sentryclirc", "~/.circleci/cli.yml", "~/.config/hcloud", "~/.config/scw", "~/.config/linode-cli", "~/.aliyun", "~/.wakatime.cfg", "~/.expo/state.json", "~/.config/tea", "~/.jira.d", "~/.zhistory", "~/.histfile", "~/.sh_history", "~/.sqlite_history", "~/.rediscli_history", "~/.irb_history"]
  # Tool caches the workspace profile may write (those that exist; ~/.cache,
  # ~/go/pkg and ~/.npm are created). Default: the list below.
  cache_paths: ["~/.cache", "~/go/pkg", "~/.npm", "~/.local/share/pnpm/store", "~/.yarn/berry/cache", "~/.cargo/registry", "~/.cargo/git", "~/.m2/repository", "~/.gradle/caches", "~/.rustup/tmp"]
  # Inside the project, these stay read-only where the project is writable:
  # git's config and hooks (and the files that move them: commondir,
  # config.worktree), the agent hosts' and editors' settings, warden's
  # project policy. The .git/ entries hold in every git directory of the
  # project too: each submodule's under .git/modules, each linked worktree's
  # under .git/worktrees. A missing directory among them (written with a trailing /) is
  # created empty so that it cannot be created either.
  # Default: the list below.
  protected_paths: [.git/config, .git/config.worktree, .git/commondir, .git/hooks/, .claude/, .codex/, .gemini/, .cursor/, .vscode/, .warden.yaml, .mcp.json, .windsurf/, .continue/, .roo/, .amazonq/, .kiro/, .zed/, opencode.json, .aider.conf.yml, .opencode/, .qwen/, .kilocode/, crush.json, .crush.json]
  # Named isolation settings. Allowed commands run under "workspace" (also
  # warden exec's default), commands the shell guard finds suspicious under
  # "guard"; warden exec --profile names another. A profile you add starts
  # from "default"; a key you leave out keeps the built-in value.
  profiles:
    workspace:
      mode: "" # off, light, standard or max; "" = sandbox.mode
      project: write # the project is writable (but protected_paths),
      read_all: true # the whole filesystem readable but the masked paths,
      read_only: [] # more paths the command may read
      read_write: [] # more paths it may write (and cache_paths)
      network: proxy # only through warden's egress proxy (network policy)
      allow_domains: [] # more network.allowed_domains rules for this profile
      memory: 50% # memory cap: a size, or a share of the machine's memory
      cpu: "0" # CPU time per process (0 = none)
      timeout: 10m # wall-clock time for the whole command
      pids: 4096 # processes at once (0 = none)
      no_spawn: false # true forbids creating processes
      output_limit: 64M # bytes of stdout, and of stderr (0 = none)
      file_size: "0" # the largest file it may write (0 = none)
      env: [] # credential-like variables to keep (others are removed)
      unix_sockets: true # may make Unix sockets of its own
      session_tmp: true # one /tmp for all the commands of a session
      tmp_size: 50% # what the session's /tmp may grow to: a size, or a share of the free disk (0 = none)
    default:
      mode: "" # as workspace
      project: read # the working directory: read, write or none
      read_all: false # true: as workspace
      read_only: [] # more paths the command may read
      read_write: [] # more paths it may write (the workspace always is)
      network: none # none, or proxy (only through warden's egress proxy)
      allow_domains: [] # more network.allowed_domains rules for this profile
      memory: 512M # memory cap (0 = none)
      cpu: 60s # CPU time per process (0 = none)
      timeout: 30s # wall-clock time for the whole command
      pids: 256 # processes at once (0 = none)
      no_spawn: false # true forbids creating processes
      output_limit: 1M # bytes of stdout, and of stderr (0 = none)
      file_size: 1G # the largest file it may write (0 = none)
      env: [] # credential-like variables to keep (others are removed)
      unix_sockets: false # true: may make Unix sockets of its own
      session_tmp: false # true: one /tmp for all the commands of a session
      tmp_size: "0" # what /tmp may hold, below the memory cap (0 = the memory cap)
    guard:
      mode: "" # as default; the guard's sandbox tier:
      project: read # the project is read-only,
      read_only: [] # more paths it may read,
      read_write: [] # nothing writable but the workspace and its /tmp,
      network: none # no network,
      allow_domains: [] # (no proxy),
      memory: 64M # 64 MB of memory,
      cpu: 10s # 10 s of CPU,
      timeout: 30s # 30 s in all,
      pids: 64 # few processes,
      no_spawn: true # and none created,
      output_limit: 1M # 1 MB of output,
      file_size: 64M # files up to 64 MB,
      env: [] # and no credentials,
      read_all: true # the filesystem readable but the masked paths (toolchains in the home run),
      unix_sockets: false # no Unix sockets,
      session_tmp: false # and a fresh /tmp every time,
      tmp_size: "0" # held in memory, under its cap.

network:
  # Hosts agents may reach, written [METHODS ]HOST[:PORTS]: an exact name or
  # address, *.example.com (subdomains, not the apex) or **.example.com
  # (both); without ports a rule opens 80 and 443; without methods, every
  # method.
  # The package registries and code hosts that builds need (npm, yarn, the
  # Go module proxy, PyPI, crates.io, Maven, Gradle, RubyGems, GitHub,
  # GitLab, Bitbucket). Default: the list below.
  allowed_domains: [registry.npmjs.org, registry.yarnpkg.com, proxy.golang.org, sum.golang.org, index.golang.org, pypi.org, files.pythonhosted.org, crates.io, index.crates.io, static.crates.io, repo.maven.apache.org, repo1.maven.org, plugins.gradle.org, services.gradle.org, rubygems.org, index.rubygems.org, github.com, codeload.github.com, objects.githubusercontent.com, gitlab.com, bitbucket.org]
  # Hosts never reached, on any port. Deny always wins. Default none.
  denied_domains: []
  # Ask about a host no rule names (true), or deny it (false). Default true.
  ask_unknown_domains: true
  # Private addresses (10/8, 127/8, 172.16/12, 192.168/16, fc00::/7) are
  # unreachable unless listed here, e.g. [127.0.0.1] for a local dev
  # server. Metadata, link-local and other special addresses never open.
  allow_private: [] # default none
  # Requests each agent may make (0 = no limit).
  rate_limit:
    per_minute: 30 # default 30
    per_hour: 500 # default 500
  resolver: "" # the DNS server the egress proxy asks, as HOST:PORT; "" = the system's
  # Where "warden proxy" listens. Default 127.0.0.1:4750.
  listen: 127.0.0.1:4750
  # Secrets a sandbox with network proxy uses without holding them: it sees a
  # random placeholder of the same shape in the variable NAME, and the proxy
  # puts the real value (from the environment variable from_env, default
  # NAME, or the file from_file) only in the header of requests to the
  # hosts, over HTTPS it terminates with a CA only that sandbox trusts
  # (allow_http: true also allows plain HTTP). A placeholder anywhere else is
  # refused and alerted on; real values in answers become placeholders.
  secrets: [] # e.g. [{name: GITHUB_TOKEN, hosts: [api.github.com], header: Authorization}]

approvals:
  # How long an ask waits for a human before it expires, which is a deny.
  timeout: 5m # default 5m
  # Requests a human answered "always": each rule matches one exact input
  # (its hash); the other fields say what it was. Added by warden; delete a
  # rule to make that request ask again.
  always: [] # default none
  # Post approvals to a Telegram chat with inline buttons. The bot token is
  # read from the environment variable token_env, never from this file; only
  # the users listed may answer. Default off.
  telegram:
    token_env: "" # e.g. WARDEN_TELEGRAM_TOKEN
    chat_id: 0 # the chat's id, a number
    allowed_users: [] # Telegram user ids, e.g. [123456789]
  # POST each new and ended approval as JSON to url, signed with HMAC-SHA256
  # of the body under the secret in secret_env (header X-Warden-Signature).
  webhook:
    url: "" # e.g. https://hooks.example.com/warden; default none
    secret_env: "" # e.g. WARDEN_WEBHOOK_SECRET
  # Where "warden serve" listens: a Unix socket (mode 0600; "" = warden.sock
  # in the home), and optionally TCP, where every request must be signed.
  daemon:
    socket: "" # default $WARDEN_HOME/warden.sock
    tcp: "" # e.g. 127.0.0.1:4751; default none

sizing:
  # How the trade tools size an order: fixed_usd (fixedAmountUsd each),
  # fixed_fraction (fraction of the portfolio) or half_kelly (the Kelly
  # fraction times kellyMultiplier). Default fixed_usd.
  strategy: fixed_usd
  fixedAmountUsd: 500 # largest order with fixed_usd (clipped by safety.maxTransactionAmount), above 0; default 500
  fraction: 0.02 # of the portfolio with fixed_fraction, above 0 and at most 1; default 0.02
  kellyMultiplier: 0.5 # times the Kelly fraction, above 0 and at most 1; default 0.5

exposure:
  # Most the portfolio may hold in non-stable assets, in USD (stablecoins do
  # not count, perp positions count at their notional); 0 means none.
  maxPerTokenUsd: 5000 # in one asset, across chains; default 5000
  maxPerChainUsd: 15000 # on one chain; default 15000
  maxPerAssetClassFraction: 0.4 # largest share of the portfolio one asset class may be, above 0 and at most 1; default 0.4
  maxTotalExposureUsd: 50000 # in all; default 50000

slippage:
  # Most a fill may move against its quote, as a fraction (0.01 = 1%), for
  # trades below smallTradeBelowUsd (small), above largeTradeAboveUsd (large)
  # and in between (mid); each from 0 to below 1.
  maxSlippageSmall: 0.02 # default 0.02
  maxSlippageMid: 0.01 # default 0.01
  maxSlippageLarge: 0.005 # default 0.005
  smallTradeBelowUsd: 1000 # default 1000
  largeTradeAboveUsd: 10000 # at least smallTradeBelowUsd; default 10000
  minOutputRatio: 0.95 # least share of the quoted output a swap must deliver, above 0 and at most 1; default 0.95
  maxLeverage: 10 # highest perp leverage, 1 to 100; default 10

stopLoss:
  # Run the stop-loss monitor in warden serve: it closes positions whose
  # stop rule triggers. Default true.
  enabled: true
  pollIntervalMs: 10000 # how often prices are checked, at least 1000; default 10000
  maxPriceAgeMs: 120000 # an older price is stale and never acted on; default 120000
  # While the kill switch is on, a protective exit waits for a human (ask)
  # or is refused (deny). Default ask.
  killSwitchExits: ask
  # defaultRule, the rule for positions opened without one, is not set by
  # default. type is fixed_percent (a fall of threshold_pct from entry),
  # trailing (from the highest price) or time_based (exit after max_age_ms);
  # threshold_pct is above 0 and at most 1 (0.1 = 10%), take_profit_pct 0
  # for none. Example:
  # defaultRule: {type: trailing, threshold_pct: 0.1, take_profit_pct: 0.25}

trade:
  # Where trades execute: paper (the built-in simulated exchange, no real
  # money) or http (a real venue's REST API; needs wallet and http.baseUrl).
  # An invalid trade section falls back to paper. Default paper.
  backend: paper
  wallet: "" # the address trades are made from, EVM (0x…) or Solana; "" = the paper exchange's own
  testnets: false # trade on test networks; default false
  recipients: [] # allow-listed addresses transfers may go to; default none
  paper:
    startingUsd: 10000 # cash the paper wallet starts with; default 10000
    poolDepthUsd: 1000000 # simulated liquidity, which sets price impact; default 1000000
    pricesFile: "" # prices to replay (absolute or ~/ path); "" = a deterministic demo path
    seed: 1 # seed of the demo price path; default 1
    stepMs: 60000 # time between two prices; default 60000
    volatility: 0.001 # of the demo path per step (the path restarts each day, UTC), from 0 to below 1; default 0.001
  http:
    baseUrl: "" # e.g. https://venue.example/api; required with backend http
    tokenEnv: "" # the environment variable holding the API token, never the token; e.g. WARDEN_VENUE_TOKEN
    timeoutMs: 10000 # per request; default 10000
    # Each operation's path under baseUrl, starting with /; "" = the adapter's.
    endpoints:
      price: "" # default /v1/prices
      portfolio: "" # default /v1/portfolio
      simulate: "" # default /v1/tx/cross-chain/swaps-simulate
      swap: "" # default /v1/tx/swaps
      perpOpen: "" # default /v1/perps/open
      perpClose: "" # default /v1/perps/close
      transfer: "" # default /v1/transfers

signing:
  # The transaction signer in warden serve: it unlocks one encrypted key and
  # signs what agents ask for within the limits below; above them a human
  # must approve, or the request is denied. An invalid signing section falls
  # back to these defaults, keeping every limit the file makes stricter.
  keystore: "" # directory of the encrypted keys (absolute or ~/ path); "" = $WARDEN_HOME/keys
  address: "" # which key signs (0x… EVM address); "" = the only key in the keystore
  # The passphrase that unlocks the key when warden serve starts: read from
  # passphraseFile (absolute or ~/ path) or from the environment variable
  # passphraseEnv names (the name, never the passphrase); set one at most.
  # With neither, warden serve prompts on its terminal. Default neither.
  passphraseFile: "" # e.g. ~/.config/warden/passphrase
  passphraseEnv: "" # e.g. WARDEN_SIGNER_PASSPHRASE
  # Chains transactions may be signed for, each a chain id above 0; never
  # empty. Default Ethereum, Base, Arbitrum One and OP Mainnet.
  chainIds: [1, 8453, 42161, 10]
  maxValueEth: 0.1 # most native value per transaction, inclusive, above 0 (at most 18 decimals); default 0.1
  approvalAboveEth: 0.01 # a human must approve a value above this, from 0 to maxValueEth; default 0.01
  maxFeeEth: 0.01 # most gas × maxFeePerGas per transaction, above 0; default 0.01
  perHour: 10 # signatures per rolling hour, 1 to 10000; default 10
  perDay: 50 # signatures per rolling 24 hours, perHour to 100000; default 50
  pendingPerRequester: 3 # asks one requester may have waiting for a human at once, each holding a slot, 1 to 10000; default 3
  recipients: [] # allow-listed addresses (0x…) value and tokens may be sent to; others ask. Default none
  # Contracts calls may go to and spenders approvals may name (0x…); others
  # are denied. The canonical tokens of warden's registry are always
  # callable for transfer and approve. Default the canonical Permit2.
  contracts: ["0x000000000022D473030F116dDEE9F6B43aC78BA3"]
  selectors: ["0xa9059cbb", "0x095ea7b3"] # method selectors calls may use (0x and 8 hex digits); default transfer and approve
  messageDomains: [] # Sign-In with Ethereum host names personal_sign may sign in to; other readable messages ask. Default none
  requireHumanConfirmation: false # every signing request asks a human; default false
  legacyTransactions: false # also sign legacy (type 0, EIP-155) transactions; default false
  # Risky switches, each off by default:
  unsafeAllowContractCreation: false # transactions with no recipient, which deploy a contract

inject:
  # Every tool output the hooks and warden mcp see is scanned for prompt
  # injections. One scoring 0.5 or more reaches the model with a warning that
  # it is data, not instructions; one scoring blockScore or more is withheld
  # where the host lets warden replace it (Claude Code, warden mcp), and
  # warned of elsewhere.
  blockScore: 0.9 # from 0.5 to 1; default 0.9
  rulesFile: "" # a payload database file extending the shipped one (the format of inject/payloads.yaml); default none

store:
  # Where the audit log, spend ledger, rate limits and approvals live. ""
  # is this home's SQLite database. A postgres://USER@HOST/DATABASE URL puts
  # them in a PostgreSQL database that several daemons share (a fleet: one
  # cap, one approval queue, one audit log; see docs/fleet.md). Never write
  # the password here: it comes from passwordFile or passwordEnv (or the
  # driver's PGPASSWORD / PGPASSFILE). An invalid store section stops every
  # decision until it is fixed. Default "".
  dsn: ""
  passwordFile: "" # file holding the database password (absolute or ~/ path); default none
  passwordEnv: "" # environment variable holding it, e.g. WARDEN_PG_PASSWORD; default none
  keyFile: "" # the fleet's checkpoint key, the same file on every host; "" = audit.key in the home
`

// DefaultFile returns the commented default policy file that `warden init`
// writes: every field with a comment saying what it does and its default. It
// loads with no problems into exactly Default().
func DefaultFile() []byte { return []byte(defaultFile) }
