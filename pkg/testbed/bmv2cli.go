package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// DefaultThriftPort is BMv2's default Thrift port.
const DefaultThriftPort = 9090

// registerLine matches simple_switch_CLI's answer to register_read:
// "NAME[3]= 7" for one cell, "NAME= 0, 1, 2" for the whole array.
var registerLine = regexp.MustCompile(`(\S+?)(?:\[(\d+)\])?=\s*([0-9, ]*)$`)

// ReadRegisterCLI reads register name from BMv2 with simple_switch_CLI
// (Thrift), for BMv2 builds whose P4Runtime server does not implement
// register reads (PI answers UNIMPLEMENTED "Register reads are not supported
// yet"). index < 0 reads every cell. prefix is prepended to the command
// (e.g. "ip netns exec NS", since BMv2's Thrift port must stay inside its
// namespace); cli is the simple_switch_CLI path ("" = PATH).
func ReadRegisterCLI(ctx context.Context, prefix []string, cli string, thriftPort int, name string, index int) ([]uint64, error) {
	if cli == "" {
		cli = "simple_switch_CLI"
	}
	if thriftPort == 0 {
		thriftPort = DefaultThriftPort
	}
	args := append(append([]string(nil), prefix...), cli, "--thrift-port", strconv.Itoa(thriftPort))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	req := "register_read " + name
	if index >= 0 {
		req += " " + strconv.Itoa(index)
	}
	cmd.Stdin = strings.NewReader(req + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, tail(out.String()))
	}
	for _, line := range strings.Split(out.String(), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "RuntimeCmd:"))
		m := registerLine.FindStringSubmatch(line)
		if m == nil || m[1] != name {
			continue
		}
		var vals []uint64
		for _, f := range strings.Split(m[3], ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("register_read %s: value %q: %w", name, f, err)
			}
			vals = append(vals, v)
		}
		if index >= 0 && len(vals) != 1 {
			return nil, fmt.Errorf("register_read %s %d: %d values in %q", name, index, len(vals), line)
		}
		return vals, nil
	}
	return nil, fmt.Errorf("register_read %s: no answer in %q", name, tail(out.String()))
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	return s
}
