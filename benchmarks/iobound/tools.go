package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The three tools every server serves, written once: each reads or writes
// Redis and calls the HTTP API, the two concurrently where the work allows,
// in the shape of the published benchmark's tools.

// backend is what the tools use: a Redis client and the HTTP API.
type backend struct {
	rdb  *redis.Client
	api  string // base URL, without a trailing slash
	http *http.Client
}

// newBackend returns a backend on the Redis server at redisAddr and the API
// at apiURL, with connection pools sized for 50 concurrent callers.
func newBackend(redisAddr, apiURL string) *backend {
	return &backend{
		rdb: redis.NewClient(&redis.Options{Addr: redisAddr, PoolSize: 64}),
		api: apiURL,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			MaxIdleConns:        128,
			MaxIdleConnsPerHost: 128,
			IdleConnTimeout:     90 * time.Second,
		}},
	}
}

func (b *backend) close() { b.rdb.Close() }

// getJSON GETs path from the API and decodes its JSON answer into v.
func (b *backend) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api+path, nil)
	if err != nil {
		return err
	}
	return b.do(req, v)
}

// postJSON POSTs body as JSON to the API and decodes its answer into v.
func (b *backend) postJSON(ctx context.Context, path string, body, v any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.api+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return b.do(req, v)
}

func (b *backend) do(req *http.Request, v any) error {
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("API %s: HTTP %d", req.URL.Path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// searchIn is the argument of search_products.
type searchIn struct {
	Category string  `json:"category"`
	MinPrice float64 `json:"min_price"`
	MaxPrice float64 `json:"max_price"`
	Limit    int     `json:"limit"`
}

// searchHit is one product search_products returns.
type searchHit struct {
	ID             int     `json:"id"`
	SKU            string  `json:"sku"`
	Name           string  `json:"name"`
	Price          float64 `json:"price"`
	Rating         float64 `json:"rating"`
	PopularityRank int     `json:"popularity_rank"`
}

// searchOut is the result of search_products.
type searchOut struct {
	Category   string      `json:"category"`
	TotalFound int         `json:"total_found"`
	Products   []searchHit `json:"products"`
	TopIDs     []int       `json:"top10_popular_ids"`
}

// searchProducts searches the catalog through the API and, at the same
// time, reads the ten most popular products from Redis, then ranks the
// hits by popularity.
func (b *backend) searchProducts(ctx context.Context, in searchIn) (searchOut, error) {
	if in.Limit < 1 || in.Limit > 100 {
		return searchOut{}, errors.New("limit must be between 1 and 100")
	}
	var (
		found          searchAnswer
		top            []string
		apiErr, rdbErr error
		wg             sync.WaitGroup
	)
	wg.Go(func() {
		q := url.Values{
			"category":  {in.Category},
			"min_price": {strconv.FormatFloat(in.MinPrice, 'f', -1, 64)},
			"max_price": {strconv.FormatFloat(in.MaxPrice, 'f', -1, 64)},
			"limit":     {strconv.Itoa(in.Limit)},
		}
		apiErr = b.getJSON(ctx, "/products/search?"+q.Encode(), &found)
	})
	wg.Go(func() {
		top, rdbErr = b.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: popularKey, Start: 0, Stop: 9, Rev: true}).Result()
	})
	wg.Wait()
	if err := errors.Join(apiErr, rdbErr); err != nil {
		return searchOut{}, err
	}
	out := searchOut{Category: in.Category, TotalFound: found.TotalFound, Products: make([]searchHit, len(found.Products)), TopIDs: make([]int, 0, len(top))}
	rank := make(map[int]int, len(top))
	for i, m := range top {
		id := parseRanked(m)
		out.TopIDs = append(out.TopIDs, id)
		rank[id] = i + 1
	}
	for i, p := range found.Products {
		out.Products[i] = searchHit{ID: p.ID, SKU: p.SKU, Name: p.Name, Price: p.Price, Rating: p.Rating, PopularityRank: rank[p.ID]}
	}
	return out, nil
}

// userIn is the argument of get_user_cart.
type userIn struct {
	UserID string `json:"user_id"`
}

// order is one entry of a user's order history.
type order struct {
	OrderID string     `json:"order_id"`
	Items   []lineItem `json:"items"`
	Time    int64      `json:"ts"`
}

// cartOut is the result of get_user_cart.
type cartOut struct {
	UserID         string     `json:"user_id"`
	Items          []lineItem `json:"items"`
	ItemCount      int        `json:"item_count"`
	EstimatedTotal float64    `json:"estimated_total"`
	FirstProduct   string     `json:"first_product"`
	RecentHistory  []order    `json:"recent_history"`
}

// getUserCart reads the user's cart from Redis, then, at the same time,
// the cart's first product from the API and the user's last five orders
// from Redis.
func (b *backend) getUserCart(ctx context.Context, in userIn) (cartOut, error) {
	cart, err := b.rdb.HGetAll(ctx, cartKey(in.UserID)).Result()
	if err != nil {
		return cartOut{}, err
	}
	out := cartOut{UserID: in.UserID, Items: []lineItem{}}
	if raw, ok := cart["items"]; ok {
		if err := json.Unmarshal([]byte(raw), &out.Items); err != nil {
			return cartOut{}, fmt.Errorf("cart of %s: %w", in.UserID, err)
		}
	}
	out.ItemCount = len(out.Items)
	out.EstimatedTotal, _ = strconv.ParseFloat(cart["total"], 64)
	first := 1
	if len(out.Items) > 0 {
		first = out.Items[0].ProductID
	}
	var (
		p              product
		history        []string
		apiErr, rdbErr error
		wg             sync.WaitGroup
	)
	wg.Go(func() { apiErr = b.getJSON(ctx, "/products/"+strconv.Itoa(first), &p) })
	wg.Go(func() { history, rdbErr = b.rdb.LRange(ctx, historyKey(in.UserID), 0, 4).Result() })
	wg.Wait()
	if err := errors.Join(apiErr, rdbErr); err != nil {
		return cartOut{}, err
	}
	out.FirstProduct = p.Name
	out.RecentHistory = make([]order, 0, len(history))
	for _, h := range history {
		var o order
		if json.Unmarshal([]byte(h), &o) == nil {
			out.RecentHistory = append(out.RecentHistory, o)
		}
	}
	return out, nil
}

// checkoutIn is the argument of checkout.
type checkoutIn struct {
	UserID string     `json:"user_id"`
	Items  []lineItem `json:"items"`
}

// checkoutOut is the result of checkout.
type checkoutOut struct {
	OrderID        string  `json:"order_id"`
	UserID         string  `json:"user_id"`
	Total          float64 `json:"total"`
	ItemsCount     int     `json:"items_count"`
	RateLimitCount int64   `json:"rate_limit_count"`
	Status         string  `json:"status"`
}

// checkout prices the order through the API and, at the same time, in one
// Redis pipeline, counts the user's checkouts, appends the order to their
// history and raises the first product's popularity.
func (b *backend) checkout(ctx context.Context, in checkoutIn) (checkoutOut, error) {
	if len(in.Items) == 0 {
		return checkoutOut{}, errors.New("items must not be empty")
	}
	entry, err := json.Marshal(order{OrderID: "ORD-" + in.UserID, Items: in.Items, Time: time.Now().Unix()})
	if err != nil {
		return checkoutOut{}, err
	}
	var (
		q              quote
		count          *redis.IntCmd
		apiErr, rdbErr error
		wg             sync.WaitGroup
	)
	wg.Go(func() {
		apiErr = b.postJSON(ctx, "/cart/calculate", checkoutIn{UserID: in.UserID, Items: in.Items}, &q)
	})
	wg.Go(func() {
		pipe := b.rdb.Pipeline()
		count = pipe.Incr(ctx, rateKey(in.UserID))
		pipe.RPush(ctx, historyKey(in.UserID), entry)
		pipe.ZIncrBy(ctx, popularKey, 1, "product:"+strconv.Itoa(in.Items[0].ProductID))
		_, rdbErr = pipe.Exec(ctx)
	})
	wg.Wait()
	if err := errors.Join(apiErr, rdbErr); err != nil {
		return checkoutOut{}, err
	}
	return checkoutOut{
		OrderID:        q.OrderID,
		UserID:         in.UserID,
		Total:          q.Total,
		ItemsCount:     len(in.Items),
		RateLimitCount: count.Val(),
		Status:         "confirmed",
	}, nil
}

// Tool names and descriptions, the same on every server.
const (
	searchName   = "search_products"
	cartName     = "get_user_cart"
	checkoutName = "checkout"

	searchDesc   = "Search products by category and price range, ranked by popularity."
	cartDesc     = "Get a user's cart and recent orders."
	checkoutDesc = "Check out a user's items: price them, count the checkout, record the order."
)
