package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// ObjectsConfig names the object store that holds the agents' episode
// files: s3://bucket/prefix on an S3 endpoint.
type ObjectsConfig struct {
	URL      string // s3://bucket/prefix
	Endpoint string // http(s)://host:port; "" takes $AWS_ENDPOINT_URL_S3 or $AWS_ENDPOINT_URL
	// Access and Secret are the credentials; "" takes $AWS_ACCESS_KEY_ID
	// and $AWS_SECRET_ACCESS_KEY.
	Access, Secret string
}

// objects is an S3 bucket prefix. Keys below it are
// <agent>/life_<N>/<episode id>/<file path>.
type objects struct {
	client *minio.Client
	bucket string
	prefix string // "" or "a/b" without slashes at the ends
	where  string // the s3:// URL, for messages
}

// parseObjectsURL splits s3://bucket/prefix.
func parseObjectsURL(s string) (bucket, prefix string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil || strings.Contains(u.Host, ":") {
		return "", "", fmt.Errorf("objects %q: want s3://BUCKET or s3://BUCKET/PREFIX", s)
	}
	return u.Host, strings.Trim(path.Clean("/"+u.Path), "/"), nil
}

func openObjects(cfg ObjectsConfig) (*objects, error) {
	bucket, prefix, err := parseObjectsURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	ep := firstNonEmpty(cfg.Endpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"))
	if ep == "" {
		return nil, fmt.Errorf("objects %s: no S3 endpoint (give --objects-endpoint or set AWS_ENDPOINT_URL)", cfg.URL)
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("objects endpoint %q: want http://HOST:PORT or https://HOST", ep)
	}
	access := firstNonEmpty(cfg.Access, os.Getenv("AWS_ACCESS_KEY_ID"))
	secret := firstNonEmpty(cfg.Secret, os.Getenv("AWS_SECRET_ACCESS_KEY"))
	c, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(access, secret, ""),
		Secure: u.Scheme == "https",
		Region: os.Getenv("AWS_REGION"),
		// A store that is down is the shipper's to retry, not the
		// client's: fail fast so the agent's view of it stays current.
		MaxRetries: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("objects %s at %s: %w", cfg.URL, ep, err)
	}
	return &objects{client: c, bucket: bucket, prefix: prefix, where: cfg.URL}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// key is the object key of file rel of an episode.
func (o *objects) key(agent string, life int, id, rel string) string {
	return path.Join(o.prefix, agent, fmt.Sprintf("life_%d", life), id, rel)
}

func (o *objects) put(ctx context.Context, key string, data []byte) error {
	_, err := o.client.PutObject(ctx, o.bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/octet-stream", DisableMultipart: true})
	if err != nil {
		return fmt.Errorf("put s3://%s/%s: %w", o.bucket, key, err)
	}
	return nil
}

func (o *objects) get(ctx context.Context, key string) ([]byte, error) {
	obj, err := o.client.GetObject(ctx, o.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: %w", o.bucket, key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return nil, fmt.Errorf("get s3://%s/%s: %w", o.bucket, key, err)
	}
	return b, nil
}
