package p4rt

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
)

// TLSOptions configures TLS to the switch. CAFile verifies the server
// (system roots when empty); CertFile and KeyFile, when set, present a
// client certificate (mTLS); ServerName overrides the name checked in the
// server certificate (useful when dialing an IP address).
type TLSOptions struct {
	CAFile     string
	CertFile   string
	KeyFile    string
	ServerName string
}

func (t TLSOptions) credentials() (credentials.TransportCredentials, error) {
	cfg, err := t.Config()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(cfg), nil
}

// Config returns the crypto/tls client configuration.
func (t TLSOptions) Config() (*tls.Config, error) {
	cfg := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("p4rt: read CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("p4rt: CA file %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, fmt.Errorf("p4rt: mTLS needs both a client certificate and its key")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("p4rt: load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
