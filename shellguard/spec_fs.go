package shellguard

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// grammarTable holds the option grammars of the programs with handlers (see
// compileGrammar for the notation). It is built once, with the specs.
func grammarTable() map[string]string {
	return map[string]string{
		"rm":       "r,R,recursive f,force i I interactive=? d,dir v,verbose no-preserve-root preserve-root=? one-file-system help version",
		"rmdir":    "p,parents v,verbose ignore-fail-on-non-empty help version",
		"shred":    "f,force n,iterations= random-source= s,size= u remove=? v,verbose x,exact z,zero help version",
		"cp":       "a,archive attributes-only backup=? b copy-contents d f,force i,interactive H l,link L,dereference n,no-clobber P,no-dereference p preserve=? no-preserve= parents R,r,recursive reflink=? remove-destination sparse= strip-trailing-slashes s,symbolic-link S,suffix= t,target-directory= T,no-target-directory u,update=? v,verbose x,one-file-system Z context=? help version",
		"mv":       "backup=? b f,force i,interactive n,no-clobber strip-trailing-slashes S,suffix= t,target-directory= T,no-target-directory u,update=? v,verbose Z,context help version exchange no-copy",
		"tee":      "a,append i,ignore-interrupts p output-error=? help version",
		"truncate": "c,no-create o,io-blocks r,reference= s,size= help version",
		"chmod":    "c,changes f,silent,quiet v,verbose no-preserve-root preserve-root reference= R,recursive help version",
		"chown":    "c,changes f,silent,quiet v,verbose dereference h,no-dereference from= no-preserve-root preserve-root reference= R,recursive H L P help version",
		"rsync":    "v,verbose q,quiet c,checksum a,archive r,recursive R,relative b,backup u,update l,links L,copy-links H,hard-links p,perms E,executability A,acls X,xattrs o,owner g,group D t,times O,omit-dir-times n,dry-run W,whole-file x,one-file-system e,rsh= z,compress P h,human-readable i,itemize-changes delete delete-before delete-during delete-delay delete-after delete-excluded remove-source-files force exclude= include= exclude-from= include-from= filter= f= progress stats partial info= backup-dir= suffix= bwlimit= chmod= chown= rsync-path= files-from= 0,from0 ignore-existing existing size-only checksum-seed= link-dest= compare-dest= copy-dest= timeout= port= password-file= list-only mkpath no-motd",
		"sed":      "n,quiet,silent e,expression= f,file= i,in-place=? l,line-length= E,r,regexp-extended s,separate u,unbuffered z,null-data posix sandbox debug follow-symlinks b,binary help version",
		"find":     "H L P O= D=",
		"mkfs":     "t,type= V,verbose",
		"sort":     "b c C d f g h i M m n R r s S= T= t= k= o,output= u z V parallel= files0-from= random-source= compress-program= help version debug",
		// The readers whose first operand is a pattern or a program (see
		// readOperands); egrep, fgrep and zgrep take grep's.
		"grep": "E,extended-regexp F,fixed-strings G,basic-regexp P,perl-regexp e,regexp= f,file= i,ignore-case no-ignore-case y w,word-regexp x,line-regexp z,null-data s,no-messages v,invert-match V,version help m,max-count= b,byte-offset n,line-number line-buffered H,with-filename h,no-filename label= o,only-matching q,quiet,silent binary-files= a,text I d,directories= D,devices= r,recursive R,dereference-recursive include= exclude= exclude-from= exclude-dir= L,files-without-match l,files-with-matches c,count T,initial-tab Z,null A,after-context= B,before-context= C,context= color,colour=? U,binary",
		"rg":   "A,after-context= B,before-context= C,context= e,regexp= f,file= g,glob= iglob= t,type= T,type-not= type-add= type-clear= r,replace= j,threads= M,max-columns= m,max-count= d,max-depth= max-filesize= E,encoding= engine= colors= color= context-separator= field-match-separator= field-context-separator= ignore-file= path-separator= pre= pre-glob= sort= sortr= dfa-size-limit= regex-size-limit= hostname-bin= hyperlink-format= generate=",
		"awk":  "f,file= E,exec= e,source= i,include= l,load= v,assign= F,field-separator= W= d,dump-variables=? D,debug=? o,pretty-print=? p,profile=? L,lint=? b,characters-as-bytes c,traditional C,copyright g,gen-pot h,help M,bignum N,use-lc-numeric n,non-decimal-data O,optimize P,posix r,re-interval s,no-optimize S,sandbox t,lint-old V,version",
	}
}

func fsHandlers(t map[string]handler) {
	t["rm"] = hRm
	t["unlink"] = func(cc *cmdCtx) {
		for _, w := range cc.args {
			cc.effect(EffDelete, w)
		}
	}
	t["rmdir"] = func(cc *cmdCtx) {
		p := cc.parse("rmdir", true)
		for _, w := range p.operands {
			cc.effect(EffDelete, w)
		}
	}
	t["shred"] = func(cc *cmdCtx) {
		p := cc.parse("shred", true)
		for _, w := range p.operands {
			if zn := cc.zone(w); zn == ZoneDevice {
				cc.effect(EffDevice, w)
			} else {
				cc.effect(EffDelete, w)
			}
		}
	}
	t["rimraf"] = func(cc *cmdCtx) { deleteOperands(cc, parseArgs(&grammar{}, cc.args, false).operands, true) }
	t["del"] = t["rimraf"]
	t["cp"] = func(cc *cmdCtx) { copyMove(cc, "cp", false) }
	t["mv"] = func(cc *cmdCtx) { copyMove(cc, "mv", true) }
	t["install"] = func(cc *cmdCtx) {
		if n := len(cc.args); n > 0 {
			cc.effect(EffWrite, cc.args[n-1])
		}
	}
	t["ln"] = t["install"]
	t["tee"] = func(cc *cmdCtx) {
		p := cc.parse("tee", false)
		for _, w := range p.operands {
			cc.effect(EffWrite, w)
		}
	}
	t["truncate"] = func(cc *cmdCtx) {
		p := cc.parse("truncate", true)
		for _, w := range p.operands {
			cc.effect(EffWrite, w)
		}
	}
	t["touch"] = func(cc *cmdCtx) {
		for _, w := range cc.args {
			if !strings.HasPrefix(w.Value, "-") {
				cc.effect(EffWrite, w)
			}
		}
	}
	t["mkdir"] = t["touch"]
	t["chmod"] = func(cc *cmdCtx) { perm(cc, "chmod") }
	t["chown"] = func(cc *cmdCtx) { perm(cc, "chown") }
	t["chgrp"] = t["chown"]
	t["chattr"] = func(cc *cmdCtx) { perm(cc, "chown") }
	t["dd"] = hDd
	t["rsync"] = hRsync
	t["sed"] = func(cc *cmdCtx) {
		p := cc.parse("sed", false)
		if p.has("file") {
			// A script file may hold e (run a command) and w (write a file).
			cc.unseen("shell.script_file", "sed runs a script file the guard cannot see")
		}
		if p.has("in-place") {
			ops := p.operands
			if !p.has("expression", "file") && len(ops) > 0 {
				ops = ops[1:]
			}
			for _, w := range ops {
				cc.effect(EffWrite, w)
			}
		}
	}
	t["sort"] = func(cc *cmdCtx) {
		p := cc.parse("sort", false)
		if o := p.flags["output"]; len(o) > 0 {
			cc.effect(EffWrite, walk.Word{Value: o[len(o)-1]})
		}
	}
	t["find"] = hFind
	for _, n := range []string{"mkfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs", "mkfs.exfat", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard", "hdparm", "badblocks", "cryptsetup", "zpool", "losetup"} {
		t[n] = hDisk
	}
}

// hRm: rm deletes its operands; recursively with -r.
func hRm(cc *cmdCtx) {
	p := cc.parse("rm", true)
	if p.has("help", "version") {
		return
	}
	if p.has("no-preserve-root") {
		cc.say(warden.Deny, "shell.rm.no_preserve_root", "rm --no-preserve-root would let rm delete the root directory").destructive = true
	}
	rec := p.has("recursive") || p.dynamicOpt && slices.ContainsFunc(p.operands, cc.rmOptionLike) && !(cc.c.feedsNoOptions[cc.cmd.Pipeline] && onlyInput(p.operands)) && !cc.c.allGitListed(p.operands)
	if len(p.operands) == 0 {
		if fz := cc.c.feeds[cc.cmd.Pipeline]; len(fz) > 0 {
			feedEffects(cc, fz, rec)
		}
	}
	deleteOperands(cc, p.operands, rec)
}

// rmOptionLike reports whether the operand w could be one of rm's options
// (-rf) once expanded: a word only known at run time whose known text
// does not rule that out. One with a slash after what it expands to, none
// of it split ("$(go env GOCACHE)/probe"), is a path or an option rm
// refuses (-r/probe: no option of rm takes an attached value), before it
// deletes anything. Quoted "$@" and "${a[@]}" are several words, the
// first of which may be -rf.
func (cc *cmdCtx) rmOptionLike(w walk.Word) bool {
	if !w.Dynamic || w.Prefix != "" && !strings.HasPrefix(w.Prefix, "-") {
		return false
	}
	raw := w.Raw
	if raw == "" {
		raw = cc.c.raw(w)
	}
	return w.Splits || strings.Contains(raw, "@") || strings.Contains(raw, "${!") || !strings.Contains(w.Value[len(w.Prefix):], "/")
}

// deleteOperands applies a delete effect to each operand. A recursive delete
// of a target only known at run time could be anything, home included.
func deleteOperands(cc *cmdCtx, ops []walk.Word, rec bool) {
	e := EffDelete
	if rec {
		e = EffDeleteRec
	}
	for _, w := range ops {
		if cc.c.gitListed(w) {
			// rm -f $(git ls-files --others -- '*.orig'): files of the
			// work tree git lists, in the working directory.
			cc.effect(e, walk.Word{Value: "a file git lists", Span: w.Span})
			continue
		}
		zn := cc.zone(w)
		if zn == ZoneUnknown {
			if fz := cc.c.feeds[cc.cmd.Pipeline]; len(fz) > 0 {
				feedEffects(cc, fz, rec)
				continue
			}
			if fz := cc.c.feeds[-1]; len(fz) > 0 && (w.Value == "{}" || w.Dynamic) {
				feedEffects(cc, fz, rec)
				continue
			}
			if rec && w.Dynamic && w.Prefix == "" && strings.Trim(w.Value, "/") == "" && !wrappedBy(cc.cmd, "xargs") {
				cc.say(warden.Deny, "shell.delete_recursive.dynamic", "a recursive delete of a target only known at run time (it could be / or your home)").destructive = true
				continue
			}
		}
		if !w.Dynamic && (w.Value == "." || w.Value == "..") && zn != ZoneTemp {
			zn = ZoneWorkspaceRoot
			cc.say(cc.c.p.lookup(e, zn), "shell."+e.String()+".workspace_root", "deleting . or .. removes the whole directory").destructive = true
			continue
		}
		cc.effect(e, w)
	}
}

// gitListed reports whether w is one command substitution of git listing
// the work tree's files ($(git ls-files …), $(git grep -l …)): its words
// are files of the work tree, none a directory, each deleted as itself.
func (c *ctx) gitListed(w walk.Word) bool {
	if !w.Dynamic || w.Prefix != "" || w.Input {
		return false
	}
	raw := strings.Trim(c.raw(w), `"`)
	if !strings.HasPrefix(raw, "$(") || !strings.HasSuffix(raw, ")") {
		return false
	}
	var inner []*walk.Command
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Via == "$()" && cmd.Span.Start >= w.Span.Start && cmd.Span.End <= w.Span.End {
			inner = append(inner, cmd)
		}
	}
	return len(inner) == 1 && len(inner[0].Argv) > 1 && !inner[0].Argv[0].Dynamic && progName(inner[0].Argv[0].Value) == "git" &&
		len(inner[0].Redirects) == 0 && gitListsTrackedPaths(inner[0].Argv[1:]) && !hasArg(inner[0].Argv, "--directory")
}

// allGitListed reports whether every word of ops only known at run time
// is a git listing of the work tree's files (gitListed): a file named
// -rf among them is a file of the work tree, and rm -rf of files removes
// those files.
func (c *ctx) allGitListed(ops []walk.Word) bool {
	any := false
	for _, w := range ops {
		if !w.Dynamic {
			continue
		}
		if !c.gitListed(w) {
			return false
		}
		any = true
	}
	return any
}

// onlyInput reports whether every word of ops only known at run time is
// input xargs fills in.
func onlyInput(ops []walk.Word) bool {
	return !slices.ContainsFunc(ops, func(w walk.Word) bool { return w.Dynamic && !w.Input })
}

// feedEffects applies a delete to targets fed through a pipe (find ~ | xargs rm).
func feedEffects(cc *cmdCtx, zones []Zone, rec bool) {
	e := EffDelete
	if rec {
		e = EffDeleteRec
	}
	for _, zn := range zones {
		if zn == ZoneWorkspaceRoot && !rec {
			// rm without -r removes no directory, so not the project's
			// root a producer started from (find . -name '*.bak'): the
			// files below it.
			zn = ZoneWorkspaceOther
		}
		if v := cc.c.p.lookup(e, zn); v != warden.Allow {
			cc.say(v, fmt.Sprintf("shell.%s.%s", e, zn), fmt.Sprintf("%s would %s paths fed to it from %s", cc.name, effectVerb(e), zn)).destructive = true
		}
	}
}

func copyMove(cc *cmdCtx, name string, move bool) {
	p := cc.parse(name, true)
	ops := p.operands
	dst := p.value("target-directory")
	var dw walk.Word
	if dst != "" {
		dw = walk.Word{Value: dst}
	} else if len(ops) > 0 {
		dw, ops = ops[len(ops)-1], ops[:len(ops)-1]
	} else {
		return
	}
	// The sources go inside a directory (cp x /tmp/, mv a b -t dir): what
	// is written is each entry made there, judged by its own name (cp
	// .bashrc ~/ writes ~/.bashrc); any entry of a temp directory is temp.
	into := dst != "" || strings.HasSuffix(dw.Value, "/") || cc.z.isTempRoot(dw.Value)
	switch {
	case !into || dw.Dynamic || len(ops) == 0 || path.Clean(dw.Value) == "/":
		cc.effect(EffWrite, dw)
	case cc.z.isTempRoot(dw.Value):
		cc.effect(EffWrite, walk.Word{Value: path.Clean(dw.Value) + "/entry"})
	case slices.ContainsFunc(ops, func(w walk.Word) bool { return w.Dynamic || w.Glob }):
		cc.effect(EffWrite, dw)
	default:
		for _, w := range ops {
			// A source named . or .. (dir/.., ./..) has no name of its
			// own: cp -r copies what it holds into the directory itself.
			if b := path.Base(w.Value); b == "." || b == ".." || b == "/" {
				cc.effect(EffWrite, dw)
				continue
			}
			cc.effect(EffWrite, walk.Word{Value: strings.TrimRight(dw.Value, "/") + "/" + path.Base(w.Value)})
		}
	}
	if move {
		for _, w := range ops {
			if w.Dynamic && !w.Input && cc.zone(w) == ZoneUnknown && cc.c.p.SandboxAvailable && cc.c.p.AllowTaskRunners && !cc.cmd.Privileged {
				// mv "$f" "archive/$(basename "$f")" in a loop: what is
				// moved is not lost but goes where the destination (a
				// write, judged above) says; in the workspace sandbox a
				// move it cannot write keeps its source
				// (agent-shapes-15: it asked as a delete).
				continue
			}
			e := EffDelete
			// (A project's own .env moves as its other files do.)
			projectSecret := !w.Dynamic && cc.z.inWorkspace(w.Value)
			if sz := cc.zone(w); sz == ZoneHomeRoot || sz == ZoneRoot || sz == ZoneSystem || sz == ZoneWorkspaceVCS || sz == ZoneHomeSensitive && !projectSecret {
				e = EffDeleteRec
			}
			cc.effect(e, w)
		}
	}
}

func perm(cc *cmdCtx, name string) {
	p := cc.parse(name, true)
	ops := p.operands
	if !p.has("reference") {
		if len(ops) == 0 {
			return
		}
		mode := ops[0]
		ops = ops[1:]
		if name == "chmod" && !mode.Dynamic && setuid(mode.Value) {
			for _, w := range ops {
				if zn := cc.zone(w); zn != ZoneWorkspaceOther && zn != ZoneTemp && zn != ZoneWorkspaceArtifact {
					cc.say(warden.Deny, "shell.perm.setuid", fmt.Sprintf("chmod %s makes %s run with its owner's privileges", mode.Value, describe(w))).destructive = true
				}
			}
		}
		if p.has("recursive") && name == "chmod" && strings.HasSuffix(mode.Value, "777") {
			for _, w := range ops {
				if zn := cc.zone(w); zn == ZoneWorkspaceOther || zn == ZoneWorkspaceArtifact {
					cc.say(warden.Ask, "shell.perm.world_writable", "chmod -R 777 makes a workspace tree writable by every user")
				}
			}
		}
	}
	e := EffPerm
	if p.has("recursive") {
		e = EffPermRec
	}
	for _, w := range ops {
		cc.effect(e, w)
	}
}

// setuid reports a chmod mode that sets the setuid or setgid bit.
func setuid(m string) bool {
	if len(m) == 4 && m[0] >= '2' && m[0] <= '7' && strings.Trim(m, "01234567") == "" {
		return true
	}
	for _, part := range strings.Split(m, ",") {
		if i := strings.IndexAny(part, "+="); i >= 0 && strings.ContainsAny(part[i:], "s") {
			return true
		}
	}
	return false
}

func hDd(cc *cmdCtx) {
	for _, w := range cc.args {
		if v, ok := strings.CutPrefix(w.Value, "of="); ok {
			t := w
			t.Value = v
			if t.Dynamic {
				t.Prefix = strings.TrimPrefix(t.Prefix, "of=")
			}
			if cc.zone(t) == ZoneDevice {
				cc.effect(EffDevice, t)
			} else {
				cc.effect(EffWrite, t)
			}
		}
	}
}

func hRsync(cc *cmdCtx) {
	p := cc.parse("rsync", false)
	rsyncRemotes(cc, p)
	if len(p.operands) < 2 {
		return
	}
	dst := p.operands[len(p.operands)-1]
	if strings.Contains(dst.Value, ":") && !strings.HasPrefix(dst.Value, "/") {
		return // remote destination
	}
	if p.has("delete", "delete-before", "delete-during", "delete-delay", "delete-after", "delete-excluded") && !p.has("dry-run") {
		cc.effect(EffDeleteRec, dst)
		return
	}
	cc.effect(EffWrite, dst)
	if p.has("remove-source-files") {
		for _, w := range p.operands[:len(p.operands)-1] {
			cc.effect(EffDelete, w)
		}
	}
}

// hFind: start paths before the expression; -delete deletes below them;
// -exec deleters are judged on the start paths. An expression that only
// selects build output (-name __pycache__, -name '*.pyc') deletes nothing
// else, so inside the project it is judged as deleting build output.
func hFind(cc *cmdCtx) {
	starts, i := findStarts(cc.args)
	del, execDel, execRec := false, false, false
	artifacts := findSelectsArtifacts(cc.args[i:])
	for j := i; j < len(cc.args); j++ {
		v := cc.args[j].Value
		switch v {
		case "-delete":
			del = true
		case "-exec", "-execdir", "-ok", "-okdir":
			if j+1 < len(cc.args) {
				n := progName(cc.args[j+1].Value)
				if n == "rm" || n == "shred" || n == "unlink" || n == "rmdir" {
					execDel = true
					for _, a := range cc.args[j+2:] {
						if a.Value == ";" || a.Value == "+" {
							break
						}
						if strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.ContainsAny(a.Value, "rR") || strings.HasPrefix(a.Value, "--rec") {
							execRec = true
						}
					}
				}
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if j+1 < len(cc.args) {
				cc.effect(EffWrite, cc.args[j+1])
			}
		}
	}
	if del || execDel {
		for _, s := range starts {
			zn := cc.zone(s)
			if artifacts && (zn == ZoneWorkspaceRoot || zn == ZoneWorkspaceOther || zn == ZoneWorkspaceArtifact) {
				if cc.c.env.Explain {
					cc.c.trace = append(cc.c.trace, "find deletes build output only, in "+zn.String())
				}
				continue
			}
			if !s.Dynamic && (s.Value == "." || s.Value == "./") && zn == ZoneWorkspaceRoot && !execRec {
				if del {
					cc.say(warden.Ask, "shell.find.delete_workspace", "find -delete removes files matching the expression across the workspace")
				}
				continue
			}
			cc.effect(EffDeleteRec, s)
		}
	}
}

// hDisk: formatting and partitioning tools on devices.
func hDisk(cc *cmdCtx) {
	switch cc.name {
	case "fdisk", "sfdisk", "gdisk", "sgdisk", "parted", "losetup":
		if len(cc.args) == 1 && (cc.args[0].Value == "-l" || cc.args[0].Value == "--list") ||
			len(cc.args) == 2 && (cc.args[0].Value == "-l" || cc.args[0].Value == "--list" || cc.args[0].Value == "--print" || cc.args[0].Value == "-p") {
			return // listing partitions, not writing
		}
	}
	p := parseArgs(&grammar{short: map[byte]optDef{'t': {name: "type", arg: true}}}, cc.args, false)
	hit := false
	for _, w := range p.operands {
		if strings.HasPrefix(w.Value, "/dev/") || strings.Contains(w.Value, "/") || strings.Contains(w.Value, ".") || w.Dynamic {
			cc.effect(EffDevice, w)
			hit = true
		}
	}
	if !hit {
		cc.say(warden.Ask, "shell.disk", fmt.Sprintf("%s changes disks or filesystems", cc.name)).destructive = true
	}
}

// findStarts returns find's start paths (the working directory when it
// names none) and the index of its expression in args.
func findStarts(args []walk.Word) ([]walk.Word, int) {
	var starts []walk.Word
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if v == "-H" || v == "-L" || v == "-P" {
			continue
		}
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == "\\(" {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []walk.Word{{Value: "."}}
	}
	return starts, i
}

// artifactFiles are file-name patterns of build output and editor debris
// that a find may select for deletion, besides the artifact directories.
var artifactFiles = setOf("*.pyc", "*.pyo", "*.pyd", "*.o", "*.obj", "*.class", "*.log", "*.tmp", "*.swp",
	"*.swo", "*~", ".DS_Store", "*.orig", "*.rej", "*.gcda", "*.gcno", "*.tsbuildinfo", ".coverage", "*.egg-info",
	"Thumbs.db", "*.test", "*.prof", "*.d")

// findSelectsArtifacts reports whether a find expression acts only on
// build output: each alternative (split at -o) that holds an action
// (-delete, -exec…) has before it a -name, -iname, -path or -wholename,
// not negated, that names an artifact directory or file pattern; an
// alternative with no action acts on nothing (-name .git -prune -o …,
// agent-shapes-19). Everything else in an alternative (-type, a negated
// -path, another -name) only narrows what it selects. Grouping is not
// read: an expression with parentheses or commas does not qualify.
func findSelectsArtifacts(expr []walk.Word) bool {
	ok, negate, acts := false, false, false
	for j := 0; j < len(expr); j++ {
		w := expr[j]
		if w.Dynamic {
			return false
		}
		neg := negate
		negate = false
		switch w.Value {
		case "-delete", "-exec", "-execdir", "-ok", "-okdir":
			if !ok {
				return false
			}
			acts = true
			if w.Value != "-delete" {
				// its command's words, up to ; or +, are not the expression's
				for j+1 < len(expr) && (expr[j+1].Dynamic || expr[j+1].Value != ";" && expr[j+1].Value != "+") {
					j++
				}
				j++
			}
		case "-o", "-or":
			ok = false // the next alternative needs its own
		case "!", "-not":
			negate = !neg
		case ",", "(", ")", "\\(", "\\)":
			return false
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
			if j+1 >= len(expr) || expr[j+1].Dynamic {
				return false
			}
			pat := expr[j+1].Value
			isName := w.Value == "-name" || w.Value == "-iname"
			if !neg && (isName && artifactName(pat) || !isName && artifactPath(pat)) {
				ok = true
			}
			j++
		}
	}
	return acts // no action: nothing is deleted by find itself
}

// artifactName reports a -name pattern that only matches build output.
func artifactName(p string) bool {
	return artifactDirs.has(p) || artifactFiles.has(p) || backupPattern(p)
}

// backupPattern reports a pattern of editors' backup copies, a glob that
// ends in ~ (*.go~, *.c.~1~): what sed -i~ and emacs leave beside a file.
func backupPattern(p string) bool {
	rest, ok := strings.CutPrefix(p, "*")
	return ok && strings.HasSuffix(rest, "~") && !strings.ContainsAny(rest, "*?[/")
}

// artifactPath reports a -path pattern with an artifact directory among its
// segments ("*/node_modules/*", "./build"), or ending in an artifact file
// pattern ("*/__pycache__/*.pyc", "*.pyc").
func artifactPath(p string) bool {
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if artifactDirs.has(s) {
			return true
		}
	}
	return artifactFiles.has(segs[len(segs)-1]) || backupPattern(segs[len(segs)-1])
}
