package tuning

import (
	"context"
	"errors"
	"fmt"

	"github.com/p4ctl/p4ctl/pkg/config"
)

// ConfigError is a configuration that cannot be used as given: missing,
// unreadable, malformed or invalid, before or after tuning (the commands
// exit 2 on it, as on a bad flag).
type ConfigError struct{ Err error }

// Error is the underlying error's text.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// Load is the one loader of a controller configuration that the commands
// use (plan, diff, apply, run, demo -c, eval stability): it reads and
// validates the file (config.LoadContext) and resolves its tune blocks
// (Resolve, about a second per pool), calling report, when not nil, with
// each resolved pool. A configuration that cannot be used as given is a
// *ConfigError; a target no bound meets is another error naming the file.
func Load(ctx context.Context, path string, o Options, report func(Pool)) (*config.Config, error) {
	cfg, err := config.LoadContext(ctx, path)
	if err != nil {
		return nil, &ConfigError{err}
	}
	cfg, pools, err := Resolve(ctx, cfg, o)
	if report != nil {
		for _, p := range pools {
			report(p)
		}
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			return nil, &ConfigError{err}
		}
		return nil, err
	}
	return cfg, nil
}
