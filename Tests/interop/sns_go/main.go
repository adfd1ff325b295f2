// Command sns_go drives Pushgate's SNS API with the AWS SDK for Go v2, unmodified: it finds the
// platform application of -app, creates an endpoint for -token, creates a topic, subscribes the
// endpoint, publishes -message (MessageStructure=json) to the topic and to the endpoint, and prints
// what the SDK answered as one JSON object. Tests/interop/test_sns_sdks.py builds and runs it.
//
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY only (a static provider), so
// nothing of the host's AWS configuration is read.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"
)

type report struct {
	PlatformApplicationArn string            `json:"platform_application_arn"`
	EndpointArn            string            `json:"endpoint_arn"`
	EndpointAttributes     map[string]string `json:"endpoint_attributes"`
	TopicArn               string            `json:"topic_arn"`
	SubscriptionArn        string            `json:"subscription_arn"`
	TopicMessageID         string            `json:"topic_message_id"`
	TargetMessageID        string            `json:"target_message_id"`
	MissingEndpointError   apiError          `json:"missing_endpoint_error"`
}

// apiError is how the SDK reads an SNS error: smithy.APIError's code and fault, and the HTTP status.
type apiError struct {
	Code   string `json:"code"`
	Fault  string `json:"fault"`
	Status int    `json:"status"`
}

func main() {
	endpoint := flag.String("endpoint", "", "the gateway's URL, e.g. http://127.0.0.1:50051")
	region := flag.String("region", "us-east-1", "the signing region")
	app := flag.String("app", "", "the Pushgate app whose platform application to use")
	token := flag.String("token", "", "the device token to register")
	topic := flag.String("topic", "go-sdk", "the topic to create")
	message := flag.String("message", "", "the message to publish (MessageStructure=json)")
	flag.Parse()
	out, err := run(context.Background(), *endpoint, *region, *app, *token, *topic, *message)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sns_go:", err)
		os.Exit(1)
	}
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
}

func newClient(endpoint, region string) *sns.Client {
	creds := credentials.NewStaticCredentialsProvider(
		os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), "")
	return sns.New(sns.Options{
		Region:           region,
		Credentials:      aws.NewCredentialsCache(creds),
		EndpointResolver: sns.EndpointResolverFromURL(endpoint),
	})
}

func run(ctx context.Context, endpoint, region, app, token, topic, message string) (*report, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := newClient(endpoint, region)
	out := &report{}
	var err error
	if out.PlatformApplicationArn, err = findApplication(ctx, client, app); err != nil {
		return nil, err
	}
	created, err := client.CreatePlatformEndpoint(ctx, &sns.CreatePlatformEndpointInput{
		PlatformApplicationArn: aws.String(out.PlatformApplicationArn),
		Token:                  aws.String(token),
		CustomUserData:         aws.String("go-sdk-v2"),
	})
	if err != nil {
		return nil, fmt.Errorf("CreatePlatformEndpoint: %w", err)
	}
	out.EndpointArn = aws.ToString(created.EndpointArn)
	attributes, err := client.GetEndpointAttributes(ctx, &sns.GetEndpointAttributesInput{EndpointArn: created.EndpointArn})
	if err != nil {
		return nil, fmt.Errorf("GetEndpointAttributes: %w", err)
	}
	out.EndpointAttributes = attributes.Attributes
	madeTopic, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(topic)})
	if err != nil {
		return nil, fmt.Errorf("CreateTopic: %w", err)
	}
	out.TopicArn = aws.ToString(madeTopic.TopicArn)
	subscribed, err := client.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: madeTopic.TopicArn, Protocol: aws.String("application"), Endpoint: created.EndpointArn,
		ReturnSubscriptionArn: true,
	})
	if err != nil {
		return nil, fmt.Errorf("Subscribe: %w", err)
	}
	out.SubscriptionArn = aws.ToString(subscribed.SubscriptionArn)
	if out.TopicMessageID, err = publish(ctx, client, &sns.PublishInput{TopicArn: madeTopic.TopicArn}, message); err != nil {
		return nil, err
	}
	if out.TargetMessageID, err = publish(ctx, client, &sns.PublishInput{TargetArn: created.EndpointArn}, message); err != nil {
		return nil, err
	}
	_, err = client.GetEndpointAttributes(ctx, &sns.GetEndpointAttributesInput{EndpointArn: aws.String(out.EndpointArn + "0")})
	out.MissingEndpointError = readError(err)
	return out, nil
}

// findApplication pages ListPlatformApplications for the ARN that ends in "/{app}".
func findApplication(ctx context.Context, client *sns.Client, app string) (string, error) {
	paginator := sns.NewListPlatformApplicationsPaginator(client, &sns.ListPlatformApplicationsInput{})
	for paginator.HasMorePages() {
		page, err := paginator.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("ListPlatformApplications: %w", err)
		}
		for _, application := range page.PlatformApplications {
			if arn := aws.ToString(application.PlatformApplicationArn); strings.HasSuffix(arn, "/"+app) {
				return arn, nil
			}
		}
	}
	return "", fmt.Errorf("ListPlatformApplications: no application for app %q", app)
}

func publish(ctx context.Context, client *sns.Client, input *sns.PublishInput, message string) (string, error) {
	input.Message = aws.String(message)
	input.MessageStructure = aws.String("json")
	input.MessageAttributes = map[string]types.MessageAttributeValue{
		"sdk": {DataType: aws.String("String"), StringValue: aws.String("go-v2")},
	}
	published, err := client.Publish(ctx, input)
	if err != nil {
		return "", fmt.Errorf("Publish: %w", err)
	}
	return aws.ToString(published.MessageId), nil
}

func readError(err error) apiError {
	var result apiError
	var api smithy.APIError
	if errors.As(err, &api) {
		result.Code = api.ErrorCode()
		result.Fault = api.ErrorFault().String()
	}
	var response interface{ HTTPStatusCode() int }
	if errors.As(err, &response) {
		result.Status = response.HTTPStatusCode()
	}
	return result
}
