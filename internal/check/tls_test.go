package check

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// TestTLS checks a node that also listens with TLS, through each way of
// asking for TLS, and fails to reach it without the certificate's CA.
func TestTLS(t *testing.T) {
	t.Parallel()
	// The certificate files are on the host: a node on another backend
	// could not read them and would fail to start, so look first.
	if be := redistest.Backend(t); be != "process" {
		t.Skipf("the certificate files are on the host; backend %s runs the node elsewhere", be)
	}
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	// Leased before Start, so released after the node is torn down.
	port := redistest.LeasePort(t)
	node := redistest.Start(t, 1, redistest.WithPersistence(), redistest.WithFlags(
		"--tls-port", port, "--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no"))[0]
	require.Equal(t, "process", node.Backend(), "Node.Backend() after redistest.Backend chose it")
	addr := "127.0.0.1:" + port
	tests := []struct {
		name string
		args []string
		exit int
	}{
		{"rediss URL", []string{"-addrs", "rediss://" + addr, "-cacert", cert}, ExitClean},
		{"-tls", []string{"-tls", "-addrs", addr, "-cacert", cert}, ExitClean},
		{"-u rediss", []string{"-u", "rediss://" + addr, "-insecure"}, ExitClean},
		{"unknown CA", []string{"-tls", "-addrs", addr}, ExitCannot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep, code := runJSON(t, tc.args...)
			if code != tc.exit {
				t.Fatalf("exit status %d, want %d (unreachable %q, findings %+v)", code, tc.exit, rep.Unreachable, rep.Findings)
			}
			if tc.exit == ExitCannot {
				mustContain(t, "unreachable", rep.Unreachable[0], "certificate")
				return
			}
			if f := findingOf(t, rep, "rediss://"+addr, FamilyAccess); f.Status != OK {
				t.Errorf("access over TLS = %+v, want ok", f)
			}
		})
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// to dir and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lockzoo check test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}
